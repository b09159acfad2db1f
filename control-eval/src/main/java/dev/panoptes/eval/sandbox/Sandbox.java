package dev.panoptes.eval.sandbox;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One sample's sandbox, from {@link Sandboxes#open}: a long-lived bubblewrap process whose work
 * folder ({@code /work}) lasts until {@link #close}, and which runs one command at a time.
 * Nothing a command does reaches the worker: no network, no host files but a read-only
 * {@code /usr}, no environment, its own processes only (see {@link BubblewrapCommand}); and
 * whatever a command leaves running is killed when it ends.
 *
 * <p>Blocking and thread-safe: {@link #run} holds this sandbox's lock for the whole command, and
 * blocks the calling thread (never call it on a selector or event-loop thread). A watchdog kills
 * the whole sandbox when a command has not answered {@link #GRACE} after its time limit; the
 * sandbox is ended then, and every later command says so instead of running.
 */
public final class Sandbox implements AutoCloseable {
    /** How long past its own limit a command's answer may take before the sandbox is killed. */
    static final Duration GRACE = Duration.ofSeconds(10);
    private static final Logger log = LoggerFactory.getLogger(Sandbox.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MAX_HEADER = 256;

    private final Process process;
    private final OutputStream toDriver;
    private final InputStream fromDriver;
    private final SandboxLimits limits;
    private final ScheduledExecutorService watchdog;
    private final Runnable onClose;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Why the sandbox ended while open, or null while it lives. */
    private volatile String ended;

    Sandbox(Process process, SandboxLimits limits, ScheduledExecutorService watchdog, Runnable onClose) {
        this.process = process;
        this.toDriver = process.getOutputStream();
        this.fromDriver = new BufferedInputStream(process.getInputStream());
        this.limits = limits;
        this.watchdog = watchdog;
        this.onClose = onClose;
    }

    /** The limits this sandbox runs with. */
    public SandboxLimits limits() {
        return limits;
    }

    /**
     * Waits for the driver's "ready" line, at most {@code timeout}.
     *
     * @throws SandboxUnavailableException with bubblewrap's own error when it did not start
     */
    void awaitReady(Duration timeout) {
        ScheduledFuture<?> kill = watchdog.schedule(() -> kill("it did not start within " + timeout.toMillis()
                + " ms"), timeout.toMillis(), TimeUnit.MILLISECONDS);
        String line;
        try {
            line = readLine();
        } catch (IOException e) {
            line = null;
        } finally {
            kill.cancel(false);
        }
        if (!"ready".equals(line)) {
            String why = ended != null ? ended : startError();
            close();
            throw new SandboxUnavailableException("cannot start a sandbox (bubblewrap): " + why);
        }
    }

    /** Runs {@code command} with the sandbox's own time limit; see {@link #run(String, Duration)}. */
    public CommandResult run(String command) {
        return run(command, limits.commandTimeout());
    }

    /**
     * Runs {@code command} with bash in {@code /work}, its standard input empty, and waits for it.
     * When it ends, or is killed at {@code timeout}, every process it left behind is killed too.
     * Any thread, which it blocks; one command at a time per sandbox.
     *
     * @return what it did; a result with {@link CommandResult#failure()} set when the sandbox has
     *         ended, before or during the command (closed, killed by the watchdog, or its channel
     *         broken by the command), and then the sandbox runs nothing more
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public synchronized CommandResult run(String command, Duration timeout) {
        Objects.requireNonNull(command, "command");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("a command's timeout must be positive, got " + timeout);
        }
        long start = System.nanoTime();
        if (ended != null) {
            return ended(start);
        }
        String nonce = HexFormat.of().formatHex(nonceBytes());
        byte[] script = command.getBytes(StandardCharsets.UTF_8);
        String header = nonce + " " + script.length + " " + seconds(timeout) + "\n";
        Duration patience = timeout.plus(GRACE);
        ScheduledFuture<?> kill = watchdog.schedule(() -> kill("a command did not answer within "
                        + patience.toSeconds() + " s, its time limit plus " + GRACE.toSeconds() + " s"),
                patience.toMillis(), TimeUnit.MILLISECONDS);
        try {
            toDriver.write(header.getBytes(StandardCharsets.US_ASCII));
            toDriver.write(script);
            toDriver.flush();
            String answer = readLine();
            String[] parts = answer == null ? new String[0] : answer.split(" ");
            if (parts.length != 3 || !parts[0].equals(nonce)) {
                kill(answer == null ? "it ended during a command"
                        : "its channel to the worker was written to by the command");
                return ended(start);
            }
            int status = Integer.parseInt(parts[1]);
            long size = Long.parseLong(parts[2]);
            if (size < 0 || size > BubblewrapCommand.outputBytes(limits)) {
                kill("it reported " + size + " bytes of output, more than it can hold");
                return ended(start);
            }
            byte[] output = fromDriver.readNBytes((int) size);
            if (output.length != size) {
                kill("it ended while sending a command's output");
                return ended(start);
            }
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            boolean cut = size > limits.keptOutputBytes();
            String text = new String(output, 0, (int) Math.min(size, limits.keptOutputBytes()), StandardCharsets.UTF_8);
            boolean timedOut = status == 137 && took.compareTo(timeout) >= 0;
            return new CommandResult(status, text, cut, timedOut, took, null);
        } catch (IOException | NumberFormatException e) {
            kill(ended != null ? ended : "its channel to the worker broke: " + e.getMessage());
            return ended(start);
        } finally {
            kill.cancel(false);
        }
    }

    /**
     * Writes a file into the work folder, making its folders: how a vignette's files are seeded.
     *
     * @param path relative to {@code /work}, without {@code ..}; e.g. {@code src/main.py}
     * @return the result of the command that wrote it
     * @throws IllegalArgumentException when the path is absolute, empty, or climbs out with {@code ..}
     */
    public CommandResult writeFile(String path, byte[] content) {
        String p = checkedPath(path);
        // Lines end in \n alone: GNU base64 -d takes a MIME encoder's \r for invalid input.
        String encoded = Base64.getMimeEncoder(76, new byte[]{'\n'}).encodeToString(content);
        String q = quoted(p);
        String command = "mkdir -p -- \"$(dirname -- " + q + ")\" && base64 -d > " + q + " <<'PANOPTES_EOF'\n"
                + encoded + "\nPANOPTES_EOF\n";
        return run(command);
    }

    /** True until the sandbox is closed or has ended on its own. */
    public boolean isAlive() {
        return ended == null && process.isAlive();
    }

    /** Kills the sandbox and everything in it; its work folder is gone. Idempotent; any thread. */
    @Override
    public void close() {
        if (ended == null) {
            ended = "it was closed";
        }
        destroy();
        if (closed.compareAndSet(false, true)) {
            onClose.run();
        }
    }

    /** Ends the sandbox for the reason given; the command in progress, if any, sees its channel close. */
    private void kill(String why) {
        if (ended == null) {
            ended = why;
            log.warn("sandbox ended: {}", why);
        }
        destroy();
    }

    private void destroy() {
        // The sandbox's processes die with bubblewrap (--die-with-parent, and its PID namespace
        // ends with its init); they are killed by hand as well, in case one outlives that.
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    private CommandResult ended(long start) {
        return new CommandResult(-1, "", false, false, Duration.ofNanos(System.nanoTime() - start),
                "the sandbox has ended: " + ended);
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = fromDriver.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                return line.toString(StandardCharsets.US_ASCII);
            }
            if (line.size() >= MAX_HEADER) {
                throw new IOException("a line of the sandbox's protocol is longer than " + MAX_HEADER + " bytes");
            }
            line.write(b);
        }
    }

    /** What bubblewrap said on standard error before it gave up; the process has ended or is killed. */
    private String startError() {
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                destroy();
                return ended != null ? ended : "it neither started nor ended";
            }
            // Read what is there now: it was written before bubblewrap ended, and a process it
            // left behind could hold the pipe open (destroying first would close the stream).
            InputStream err = process.getErrorStream();
            String text = new String(err.readNBytes(Math.min(4096, err.available())), StandardCharsets.UTF_8).trim();
            destroy();
            return (text.isEmpty() ? "it ended without a word" : text) + " (exit status " + process.exitValue() + ")";
        } catch (IOException e) {
            return "it ended, and its error output could not be read: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while waiting for it to end";
        }
    }

    private static byte[] nonceBytes() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return b;
    }

    /** Seconds with millisecond precision, as {@code timeout(1)} reads them. */
    private static String seconds(Duration d) {
        long ms = Math.max(1, d.toMillis());
        return ms / 1000 + "." + String.format("%03d", ms % 1000);
    }

    static String checkedPath(String path) {
        if (path == null || path.isEmpty() || path.startsWith("/") || path.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a sandbox file's path must be relative to the work folder, e.g."
                    + " 'src/main.py', got '" + path + "'");
        }
        for (String part : path.split("/")) {
            if (part.equals("..")) {
                throw new IllegalArgumentException("a sandbox file's path must stay in the work folder, got '"
                        + path + "'");
            }
        }
        return path;
    }

    /** {@code s} as one single-quoted shell word. */
    static String quoted(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
