package dev.panoptes.eval.sandbox;

import dev.panoptes.control.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;

/**
 * A worker's sandboxes: builds each sample a fresh {@link Sandbox} on bubblewrap, at most
 * {@code slots} at once. It fails closed: {@link #check} says at start whether this machine can
 * build one at all, and {@link #open} throws {@link SandboxUnavailableException} (the worker's
 * fault) rather than ever run a command without one.
 *
 * <p>Thread-safe. {@link #open} blocks while all slots are taken: call it, and everything done
 * with a sandbox, on threads meant for it, never on a selector thread.
 */
public final class Sandboxes implements AutoCloseable {
    /** How long a sandbox may take to start. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(20);
    private static final Logger log = LoggerFactory.getLogger(Sandboxes.class);

    private final Path bwrap;
    private final Path setpriv;
    private final String missing;
    private final SandboxLimits limits;
    private final int slots;
    private final Semaphore free;
    private final ScheduledExecutorService watchdog;

    private Sandboxes(Path bwrap, Path setpriv, String missing, SandboxLimits limits, int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("a worker with sandboxes needs at least 1 at once, got " + slots);
        }
        this.bwrap = bwrap;
        this.setpriv = setpriv;
        this.missing = missing;
        this.limits = Objects.requireNonNull(limits, "limits");
        this.slots = slots;
        this.free = new Semaphore(slots, true);
        this.watchdog = Executors.newSingleThreadScheduledExecutor(DaemonThreads.numbered("sandbox-watchdog"));
    }

    /**
     * Sandboxes with the {@code bwrap} found on {@code path} (the worker's {@code PATH}), and, when
     * the worker runs as root, {@code setpriv} to run them as nobody. Starts nothing: when a
     * program is missing, {@link #check} and {@link #open} say so.
     *
     * @param path  the folders to look for programs in, as {@code PATH} lists them; null for none
     * @param slots sandboxes at once, at least 1
     */
    public static Sandboxes onPath(String path, SandboxLimits limits, int slots) {
        List<String> dirs = path == null ? List.of() : List.of(path.split(":"));
        return with(find(dirs, "bwrap"), dirs, limits, slots);
    }

    /**
     * Sandboxes with the given bubblewrap executable (null: none), and {@code setpriv} from
     * {@code dirs} when the worker runs as root.
     */
    static Sandboxes with(Path bwrap, List<String> dirs, SandboxLimits limits, int slots) {
        if (bwrap == null || !Files.isExecutable(bwrap)) {
            return new Sandboxes(null, null, "bubblewrap (bwrap) is not installed or not on PATH"
                    + (bwrap == null ? "" : " (" + bwrap + ")") + "; install it (Debian: apt-get install bubblewrap)",
                    limits, slots);
        }
        if (!runsAsRoot()) {
            return new Sandboxes(bwrap, null, null, limits, slots);
        }
        Path setpriv = find(dirs, "setpriv");
        if (setpriv == null) {
            return new Sandboxes(bwrap, null, "this worker runs as root, whose processes the kernel never limits,"
                    + " and setpriv (util-linux), which would run sandboxes as nobody, is not on PATH; run the"
                    + " worker as another user or install util-linux", limits, slots);
        }
        return new Sandboxes(bwrap, setpriv, null, limits, slots);
    }

    /** The limits each sandbox gets. */
    public SandboxLimits limits() {
        return limits;
    }

    /** How many sandboxes may run at once. */
    public int slots() {
        return slots;
    }

    /**
     * Builds one sandbox and runs a command in it: what a worker does at start. Blocks for a slot
     * and for the sandbox to start. Any thread but a selector's.
     *
     * @return null when this machine can build sandboxes; otherwise why not, and what to do
     * @throws InterruptedException when the calling thread is interrupted
     */
    public String check() throws InterruptedException {
        if (missing != null) {
            return missing;
        }
        try (Sandbox sandbox = open()) {
            CommandResult r = sandbox.run("echo sandbox-ok", Duration.ofSeconds(10));
            if (!r.succeeded() || !r.output().equals("sandbox-ok\n")) {
                return "a sandbox started but could not run a command: exit status " + r.exitStatus()
                        + (r.failure() == null ? "" : ", " + r.failure()) + ", output '" + r.output().strip() + "'";
            }
            return null;
        } catch (SandboxUnavailableException e) {
            return e.getMessage();
        }
    }

    /**
     * A fresh sandbox with an empty work folder, once a slot is free; the slot is free again when
     * the sandbox is closed. Blocks. Any thread but a selector's.
     *
     * @throws SandboxUnavailableException when this worker cannot build one, saying why
     * @throws InterruptedException        when interrupted while waiting for a slot or the start
     */
    public Sandbox open() throws InterruptedException {
        if (missing != null) {
            throw new SandboxUnavailableException("this worker cannot run sandboxes: " + missing);
        }
        free.acquire();
        boolean handedOver = false;
        try {
            ProcessBuilder pb = new ProcessBuilder(BubblewrapCommand.argv(bwrap, setpriv, limits));
            // The worker's environment (its API key, its token) never reaches bubblewrap either.
            pb.environment().clear();
            pb.directory(Path.of("/").toFile());
            Process process;
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new SandboxUnavailableException("cannot start bubblewrap (" + bwrap + "): " + e.getMessage(), e);
            }
            Sandbox sandbox = new Sandbox(process, limits, watchdog, free::release);
            handedOver = true;
            sandbox.awaitReady(START_TIMEOUT);
            log.debug("sandbox started (pid {})", process.pid());
            return sandbox;
        } finally {
            if (!handedOver) {
                free.release();
            }
        }
    }

    /** Stops the watchdog; sandboxes still open should be closed first. */
    @Override
    public void close() {
        watchdog.shutdownNow();
    }

    @Override
    public String toString() {
        return "Sandboxes[" + (missing != null ? "unavailable" : "bwrap " + bwrap + (setpriv != null ? " as nobody" : ""))
                + ", slots=" + slots + "]";
    }

    private static Path find(List<String> dirs, String name) {
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /** True when the worker's real user is root (Linux: from /proc/self/status). */
    private static boolean runsAsRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[1].equals("0");
                }
            }
        } catch (IOException e) {
            log.debug("cannot read /proc/self/status; taking the worker for root, the safer guess", e);
        }
        return true;
    }
}
