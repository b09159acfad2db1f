package dev.panoptes.coordinator;

import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Another process for {@link DatabaseLockTest}: a lock held in the test's own JVM can only be
 * seen, and its file only read without releasing it, from outside that JVM.
 *
 * <ul>
 *   <li>{@code acquire DB}: tries {@link DatabaseLock#acquire}, prints {@code ACQUIRED} or
 *       {@code REFUSED <message>}, and exits.</li>
 *   <li>{@code hold-garbage DB BYTES}: locks DB's lock file as a coordinator would but writes
 *       {@code BYTES} (hex) into it instead of who it is, prints {@code HELD}, and holds the lock
 *       until its standard input closes.</li>
 * </ul>
 */
final class LockProbe {
    private LockProbe() {
    }

    /** Runs one of the modes above. */
    public static void main(String[] args) throws Exception {
        Path db = Path.of(args[1]);
        switch (args[0]) {
            case "acquire" -> {
                try (DatabaseLock lock = DatabaseLock.acquire(db, new InetSocketAddress("127.0.0.1", 7070))) {
                    System.out.println("ACQUIRED " + lock.file());
                } catch (DatabaseLock.InUseException e) {
                    System.out.println("REFUSED " + e.getMessage());
                }
            }
            case "hold-garbage" -> {
                try (RandomAccessFile raf = new RandomAccessFile(DatabaseLock.lockFileFor(db).toFile(), "rw")) {
                    FileLock lock = raf.getChannel().tryLock(DatabaseLock.LOCK_POSITION, 1, false);
                    if (lock == null) {
                        System.out.println("BUSY");
                        return;
                    }
                    raf.setLength(0);
                    raf.write(hex(args[2]));
                    System.out.println("HELD");
                    System.out.flush();
                    while (System.in.read() >= 0) {
                        // Hold the lock until the test closes our input.
                    }
                }
            }
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static byte[] hex(String s) {
        byte[] bytes = new byte[s.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    /** The hex form {@code hold-garbage} takes. */
    static String toHex(String text) {
        StringBuilder sb = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
