package dev.panoptes.bench.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The child side of the parent's {@link Child} handle: replies as {@link Kv} lines on stdout,
 * commands from stdin, and the two rules that make every child stop by itself: it exits when its
 * stdin closes (the parent ended or closed it), and it exits after {@code bench.maxLifeSeconds}
 * whatever happens.
 */
public final class ChildIo {
    private static final Object OUT = new Object();

    private ChildIo() {
    }

    /** Starts the lifetime watchdog. Call first in every child main. */
    public static void startWatchdog() {
        long maxLifeSeconds = Long.getLong("bench.maxLifeSeconds", 900);
        Thread t = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(maxLifeSeconds);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("bench child: lived " + maxLifeSeconds + " s (bench.maxLifeSeconds); exiting");
            Runtime.getRuntime().halt(3);
        }, "bench-watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** For children that take no commands: exits the JVM when stdin closes. */
    public static void exitWhenStdinCloses() {
        Thread t = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // Commands are not expected; anything sent is ignored.
                }
            } catch (IOException e) {
                // Treated as a close.
            }
            Runtime.getRuntime().halt(0);
        }, "bench-stdin");
        t.setDaemon(true);
        t.start();
    }

    /** A reader of command lines; {@link #nextCommand} exits the JVM at end of input. */
    public static BufferedReader commands() {
        return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    }

    /** The next command, or exits the JVM (status 0) when the parent closed stdin. */
    public static Kv nextCommand(BufferedReader in) throws IOException {
        while (true) {
            String line = in.readLine();
            if (line == null) {
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
            if (!line.isBlank()) {
                return Kv.parse(line);
            }
        }
    }

    /** Prints one reply line: a tag and alternating keys and values. Thread-safe. */
    public static void reply(String tag, Object... keysAndValues) {
        String line = Kv.line(tag, keysAndValues);
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /** Reports a failure to the parent and exits. */
    public static void die(String what, Throwable e) {
        System.err.println("bench child: " + what + ": " + e);
        e.printStackTrace(System.err);
        reply("ERROR", "what", what, "error", String.valueOf(e).replace('\n', ' '));
        Runtime.getRuntime().halt(2);
    }

    /** A child's long-running work: any failure of it ends the child through {@link #die}. */
    @FunctionalInterface
    public interface Work {
        /** Runs until done or failed. */
        void run() throws Exception;
    }

    /**
     * Starts {@code work} on a daemon thread named {@code name}; a failure is reported to the parent
     * as {@code what} and ends the child, so a dead thread never leaves the parent waiting.
     */
    public static void startDaemon(String name, String what, Work work) {
        Thread thread = new Thread(() -> {
            try {
                work.run();
            } catch (Exception | Error e) {
                die(what, e);
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Sets the root log level (logback) so that per-connection info lines do not cost the measurement. */
    public static void logLevel(String level) {
        org.slf4j.Logger root = org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(ch.qos.logback.classic.Level.toLevel(System.getProperty("bench.log", level)));
        }
    }
}
