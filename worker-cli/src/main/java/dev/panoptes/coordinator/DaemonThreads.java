package dev.panoptes.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories for the worker's own threads: daemon, so that a job stuck in a model call
 * never keeps the JVM alive, and named, so that a thread dump says what each one is for.
 */
final class DaemonThreads {
    private static final Logger log = LoggerFactory.getLogger(DaemonThreads.class);

    private DaemonThreads() {
    }

    /** A factory of daemon threads named {@code <prefix>-1}, {@code <prefix>-2}, ... */
    static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            t.setUncaughtExceptionHandler((thread, e) ->
                    log.error("uncaught exception on thread {}", thread.getName(), e));
            return t;
        };
    }
}
