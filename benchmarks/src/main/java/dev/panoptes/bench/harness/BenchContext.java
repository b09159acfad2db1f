package dev.panoptes.bench.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * What every measurement of one invocation shares: where child logs go, the options every child
 * JVM gets, and the children still running (all killed when the invocation ends, however it ends).
 *
 * <p>Used by the main thread of the parent JVM, and by its shutdown hook.
 */
public final class BenchContext implements AutoCloseable {
    private final Path logDir;
    private final boolean verbose;
    private final List<String> childJvmArgs;
    private final List<String> coordinatorJvmArgs;
    private final List<Child> children = new ArrayList<>();
    private final Thread hook = new Thread(this::killAll, "bench-shutdown");

    public BenchContext(String measurement, boolean verbose, List<String> extraJvmArgs, List<String> coordinatorJvmArgs) {
        this.verbose = verbose;
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        this.logDir = Path.of(System.getProperty("java.io.tmpdir"), "panoptes-bench", measurement + "-" + stamp);
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the log directory " + logDir, e);
        }
        List<String> args = new ArrayList<>();
        // Loopback only, as IPv4, like the product's tests; assertions stay off, as in production.
        args.add("-Djava.net.preferIPv4Stack=true");
        args.add("-Dbench.maxLifeSeconds=900");
        args.addAll(extraJvmArgs);
        this.childJvmArgs = List.copyOf(args);
        this.coordinatorJvmArgs = List.copyOf(coordinatorJvmArgs);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    public Path logDir() {
        return logDir;
    }

    public boolean verbose() {
        return verbose;
    }

    public List<String> childJvmArgs() {
        return childJvmArgs;
    }

    /** The user's --coordinator-jvm-opt options, for the product's coordinator process (every measurement that starts one). */
    public List<String> coordinatorJvmArgs() {
        return coordinatorJvmArgs;
    }

    public synchronized void track(Child child) {
        children.add(child);
    }

    /** Closes every child still running, newest first. */
    @Override
    public void close() {
        List<Child> copy;
        synchronized (this) {
            copy = new ArrayList<>(children);
            children.clear();
        }
        for (int i = copy.size() - 1; i >= 0; i--) {
            copy.get(i).close();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // Already shutting down: the hook is running or has run.
        }
    }

    private void killAll() {
        List<Child> copy;
        synchronized (this) {
            copy = new ArrayList<>(children);
        }
        for (Child c : copy) {
            c.process().destroyForcibly();
        }
    }
}
