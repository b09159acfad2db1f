package dev.panoptes.control;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Thread factories for the project's own threads: daemon, so that a thread stuck in a model call or
 * a socket never keeps the JVM alive past its owner's {@code close()}, named, so that a thread dump
 * says what each one is for, and logging what escapes a task, which would otherwise vanish on stderr.
 * Stateless; any thread.
 */
public final class DaemonThreads {
    private static final Logger log = LoggerFactory.getLogger(DaemonThreads.class);

    private DaemonThreads() {
    }

    /** A factory of daemon threads named {@code <prefix>-1}, {@code <prefix>-2}, ... */
    public static ThreadFactory numbered(String prefix) {
        return named(n -> prefix + "-" + (n + 1));
    }

    /**
     * A factory of daemon threads named by {@code name}, given how many this factory made before
     * (0 for the first).
     */
    public static ThreadFactory named(IntFunction<String> name) {
        AtomicInteger made = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, name.apply(made.getAndIncrement()));
            t.setDaemon(true);
            t.setUncaughtExceptionHandler((thread, e) ->
                    log.error("uncaught exception on thread {}", thread.getName(), e));
            return t;
        };
    }
}
