package dev.panoptes.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * One coordinator per result database: an OS lock on a sibling file ({@code math.db.lock} for
 * {@code math.db}), held from {@link #acquire} to {@link #close()}.
 *
 * <p><b>What it promises.</b> While one {@code DatabaseLock} is open for a database, every other
 * {@link #acquire} of the same database fails with {@link InUseException}, whether it comes from
 * another process (on this machine, or on another one sharing a file system with working locks)
 * or from this JVM. The lock is the operating system's ({@link java.nio.channels.FileChannel#tryLock}),
 * not the file's existence, so it ends with its process: a {@code kill -9} or a crash frees it
 * and the next coordinator starts without anyone cleaning up. The lock file stays on disk; it is
 * emptied on {@link #close()}, and whatever a killed holder left in it is overwritten by the next
 * one, so its content means something only while a process holds the lock.
 *
 * <p>The holder writes who it is into the lock file (pid, host name, listening address, start
 * time) so that a refused coordinator can name it in one line. Acquiring never creates, opens or
 * reads the database itself.
 *
 * <p><b>Threads.</b> Any thread may {@link #acquire} a lock, and any thread may then call
 * {@link #listening} and {@link #close()} (they are synchronized). The OS lock belongs to the
 * process, not to the thread, and interrupting a thread never releases it: the file is written
 * with {@link RandomAccessFile}, which, unlike a {@code FileChannel}, is not closed by an
 * interrupt.
 */
public final class DatabaseLock implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DatabaseLock.class);

    /**
     * The byte range locked: one byte far past anything written. Not the content itself, because
     * on Windows a locked range cannot be read by other processes, and a refused coordinator must
     * read who holds the lock.
     */
    static final long LOCK_POSITION = Long.MAX_VALUE - 1;
    /** How much of the lock file a refused coordinator reads; the real content is ~150 bytes. */
    private static final int MAX_CONTENT = 4096;

    /**
     * The locks this JVM holds, by lock file. A second acquire in the same JVM must be refused
     * from here, without opening the file at all: with POSIX locks, closing ANY descriptor of a
     * file releases every lock this process holds on it, so merely reading the file to name the
     * holder would silently unlock the first coordinator.
     */
    private static final Map<Path, DatabaseLock> HELD = new ConcurrentHashMap<>();

    private final Path database;
    private final Path file;
    private final RandomAccessFile raf;
    private final FileLock lock;
    private Holder holder;
    private boolean closed;

    private DatabaseLock(Path database, Path file, RandomAccessFile raf, FileLock lock, Holder holder) {
        this.database = database;
        this.file = file;
        this.raf = raf;
        this.lock = lock;
        this.holder = holder;
    }

    /**
     * Takes the lock for {@code database} and records this process as its holder. Returns at
     * once: never waits for another holder.
     *
     * @param database the result database, as the user named it (it need not exist; its folder
     *                 must)
     * @param listen   where this coordinator is about to listen (the {@code --listen} option);
     *                 {@link #listening} replaces it with the bound address
     * @return the held lock; close it to release
     * @throws InUseException when another coordinator, in this JVM or another process, holds it;
     *                        the message is one line naming that holder
     * @throws IOException    when the lock file cannot be created, opened or written
     */
    public static DatabaseLock acquire(Path database, InetSocketAddress listen) throws IOException {
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(listen, "listen");
        Path file = lockFileFor(database);
        Holder me = new Holder(ProcessHandle.current().pid(), localHostName(), hostPort(listen),
                Instant.now().truncatedTo(ChronoUnit.SECONDS));
        // A placeholder claims the path in this JVM before the file is opened (see HELD).
        DatabaseLock claim = new DatabaseLock(database, file, null, null, me);
        DatabaseLock other = HELD.putIfAbsent(file, claim);
        if (other != null) {
            throw new InUseException(database, other.holder());
        }
        try {
            DatabaseLock held = lockFile(database, file, me);
            HELD.replace(file, claim, held);
            return held;
        } catch (IOException | RuntimeException | Error e) {
            HELD.remove(file, claim);
            throw e;
        }
    }

    private static DatabaseLock lockFile(Path database, Path file, Holder me) throws IOException {
        RandomAccessFile raf;
        try {
            raf = new RandomAccessFile(file.toFile(), "rw");
        } catch (IOException e) {
            throw new IOException("cannot open the lock file " + file + " of " + database + ": " + e.getMessage(), e);
        }
        try {
            FileLock lock;
            try {
                lock = raf.getChannel().tryLock(LOCK_POSITION, 1, false);
            } catch (OverlappingFileLockException e) {
                // Only code outside this class locking the same file can get here (HELD refuses
                // our own); which code it is cannot be known.
                lock = null;
            }
            if (lock == null) {
                throw new InUseException(database, Holder.parse(readContent(raf)), file);
            }
            DatabaseLock held = new DatabaseLock(database, file, raf, lock, me);
            held.write(me);
            return held;
        } catch (IOException | RuntimeException | Error e) {
            // Also releases the OS lock when writing who we are failed after taking it.
            raf.close();
            throw e;
        }
    }

    /**
     * Records the address the server is bound to (with {@code --listen 127.0.0.1:0}, the port
     * only known now), so that a refused coordinator can say where this one listens. A failure to
     * write is logged, not thrown: the lock still holds, only the refusal message is less precise.
     */
    public synchronized void listening(InetSocketAddress address) {
        if (closed) {
            return;
        }
        Holder updated = new Holder(holder.pid(), holder.host(), hostPort(address), holder.since());
        holder = updated;
        try {
            write(updated);
        } catch (IOException e) {
            log.warn("cannot record the listening address in {}: {}", file, e.getMessage());
        }
    }

    /** The lock file, beside the (real) database file. */
    Path file() {
        return file;
    }

    /** Who holds this lock, as the lock file says and a refused coordinator reports it. */
    public synchronized Holder holder() {
        return holder;
    }

    /**
     * Empties the lock file and releases the lock. Idempotent; never throws (a failure is logged:
     * closing the file releases the OS lock in any case).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            // Empty, so that nobody reading the file later takes a finished run for a live one.
            raf.setLength(0);
        } catch (IOException e) {
            log.debug("cannot empty {}", file, e);
        }
        try {
            lock.release();
        } catch (IOException e) {
            log.debug("cannot release the lock on {}", file, e);
        }
        try {
            raf.close();
        } catch (IOException e) {
            log.warn("cannot close the lock file {}: {}", file, e.getMessage());
        } finally {
            // Only after the descriptor is closed: closing it releases every POSIX lock this process
            // holds on the file, including one a new holder in this JVM might already have taken.
            HELD.remove(file, this);
        }
    }

    @Override
    public String toString() {
        return "DatabaseLock[" + database + ", " + file + (closed ? ", released]" : ", held]");
    }

    private void write(Holder h) throws IOException {
        byte[] bytes = h.toFileContent(database).getBytes(StandardCharsets.UTF_8);
        // One write at offset 0, then trim: a reader never sees the file empty while it is held.
        raf.seek(0);
        raf.write(bytes);
        raf.setLength(bytes.length);
    }

    private static byte[] readContent(RandomAccessFile raf) {
        try {
            int length = (int) Math.min(raf.length(), MAX_CONTENT);
            byte[] bytes = new byte[length];
            raf.seek(0);
            int n = 0;
            while (n < length) {
                int r = raf.read(bytes, n, length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            return n == length ? bytes : Arrays.copyOf(bytes, n);
        } catch (IOException e) {
            // The holder is still the holder; the refusal just cannot name it.
            log.debug("cannot read the lock file", e);
            return new byte[0];
        }
    }

    /**
     * The lock file for a database: {@code NAME.lock} beside the real file, so that two spellings
     * of one database ({@code ./math.db}, {@code /data/math.db}, a symbolic link) share one lock.
     */
    static Path lockFileFor(Path database) throws IOException {
        Path absolute = database.toAbsolutePath().normalize();
        Path real;
        if (Files.exists(absolute)) {
            real = absolute.toRealPath();
        } else {
            Path parent = absolute.getParent();
            if (parent == null || absolute.getFileName() == null) {
                throw new IOException("not a file: " + database);
            }
            real = parent.toRealPath().resolve(absolute.getFileName());
        }
        return real.resolveSibling(real.getFileName() + ".lock");
    }

    private static String hostPort(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            // The refusal still names the pid and the address; "on <host>" is just left out.
            return null;
        }
    }

    /**
     * Who holds a database: what the lock file says, with anything missing or unreadable left
     * null.
     *
     * @param pid    the holder's process id
     * @param host   the holder's host name
     * @param listen where it listens for workers, {@code host:port}
     * @param since  when it took the lock
     */
    public record Holder(Long pid, String host, String listen, Instant since) {
        private static final Pattern PID = Pattern.compile("[0-9]{1,18}");
        private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._%:-]{1,253}");
        private static final Pattern LISTEN = Pattern.compile("[A-Za-z0-9._%:\\[\\]-]{1,260}:[0-9]{1,5}");

        /** What the holder writes, one {@code key=value} per line, after a comment for humans. */
        String toFileContent(Path database) {
            StringBuilder sb = new StringBuilder();
            sb.append("# The Panoptes coordinator using ").append(oneLine(database.toString()))
                    .append(". Meaningful only while a process holds an OS lock on this file.\n");
            if (pid != null) {
                sb.append("pid=").append(pid).append('\n');
            }
            if (host != null) {
                sb.append("host=").append(oneLine(host)).append('\n');
            }
            if (listen != null) {
                sb.append("listen=").append(oneLine(listen)).append('\n');
            }
            if (since != null) {
                sb.append("since=").append(since).append('\n');
            }
            return sb.toString();
        }

        /**
         * Reads what a holder wrote. Anything else (an empty file, a half-written line, binary
         * garbage, values that do not look like what a holder writes) yields nulls, never an
         * exception, and never text that could break the refusal's single line.
         */
        static Holder parse(byte[] content) {
            String text = new String(content, StandardCharsets.UTF_8);
            Map<String, String> values = new HashMap<>();
            int start = 0;
            // Only complete lines: the last one may be cut short by a holder writing just now.
            for (int end = text.indexOf('\n'); end >= 0; start = end + 1, end = text.indexOf('\n', start)) {
                String line = text.substring(start, end).strip();
                int eq = line.indexOf('=');
                if (!line.startsWith("#") && eq > 0) {
                    values.putIfAbsent(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
                }
            }
            String pid = matching(values.get("pid"), PID);
            return new Holder(pid == null ? null : Long.valueOf(pid), matching(values.get("host"), HOST),
                    matching(values.get("listen"), LISTEN), instant(values.get("since")));
        }

        /** {@code pid 4242 on gpu-01, listening on 127.0.0.1:7070, since 2026-12-01T10:31:02Z}, or less. */
        String describe() {
            List<String> parts = new ArrayList<>();
            if (pid != null) {
                parts.add("pid " + pid + (host != null ? " on " + host : ""));
            } else if (host != null) {
                parts.add("on " + host);
            }
            if (listen != null) {
                parts.add("listening on " + listen);
            }
            if (since != null) {
                parts.add("since " + since);
            }
            return String.join(", ", parts);
        }

        private static String matching(String value, Pattern pattern) {
            return value != null && pattern.matcher(value).matches() ? value : null;
        }

        private static Instant instant(String value) {
            if (value == null || value.length() > 40) {
                return null;
            }
            try {
                return Instant.parse(value);
            } catch (DateTimeException e) {
                return null;
            }
        }

        private static String oneLine(String s) {
            return s.replaceAll("[\\r\\n]+", " ");
        }
    }

    /**
     * Another coordinator holds the database. The message is the one line a user sees, e.g.
     * {@code math.db is in use by another coordinator (pid 4242 on gpu-01, listening on
     * 127.0.0.1:7070, since 2026-12-01T10:31:02Z); stop it, or use another --db}.
     */
    static final class InUseException extends IOException {
        private static final long serialVersionUID = 1L;

        private final transient Holder holder;

        /** Refused in this JVM: the holder is known exactly. */
        InUseException(Path database, Holder holder) {
            super(message(database, holder, null));
            this.holder = holder;
        }

        /** Refused by the OS: the holder is what its lock file says. */
        InUseException(Path database, Holder holder, Path lockFile) {
            super(message(database, holder, lockFile));
            this.holder = holder;
        }

        /** The holder as far as it is known (fields it did not say are null). */
        Holder holder() {
            return holder;
        }

        static String message(Path database, Holder holder, Path lockFile) {
            String who = holder.describe();
            if (who.isEmpty()) {
                who = "which one is unknown: " + (lockFile == null ? "its lock file" : lockFile)
                        + " holds nothing readable";
            }
            return Holder.oneLine(database.toString()) + " is in use by another coordinator (" + who
                    + "); stop it, or use another --db";
        }
    }
}
