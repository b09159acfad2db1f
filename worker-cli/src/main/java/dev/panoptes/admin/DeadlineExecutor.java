package dev.panoptes.admin;

import dev.panoptes.control.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The executor {@link AdminServer} gives the JDK's HTTP server: the threads that read each
 * request, run the handler and write the answer, with the limits the endpoint promises.
 *
 * <ul>
 *   <li><b>Bounded.</b> {@code threads} threads ({@code panoptes-admin-N}) and {@code queue}
 *       exchanges waiting at most.</li>
 *   <li><b>A deadline per connection.</b> The JDK server reads and writes a connection on the
 *       thread that runs its exchange, with the channel in blocking mode, so a client that sends
 *       half a request or reads its answer slowly would hold that thread. Each exchange here has a
 *       deadline, from when a thread takes it; past it the thread is interrupted, which closes a
 *       channel blocked in a read or write ({@link java.nio.channels.ClosedByInterruptException})
 *       and so frees the thread. The flag is cleared before the thread takes the next exchange.</li>
 *   <li><b>503 when busy.</b> An exchange that finds every thread busy and the queue full goes to
 *       one more thread ({@code panoptes-admin-busy}) whose handler answers 503 at once
 *       ({@link #busy()} tells it); its own deadline is {@link #BUSY_DEADLINE} and its queue
 *       {@link #BUSY_QUEUE}. Past that too, the exchange runs on the caller (the JDK's dispatcher
 *       thread) under the same short deadline, rather than be dropped: the JDK server does not
 *       close a connection whose exchange its executor refused.</li>
 * </ul>
 * Thread-safe.
 */
final class DeadlineExecutor implements Executor {
    private static final Logger log = LoggerFactory.getLogger(DeadlineExecutor.class);
    /** How long a busy answer may take to read its request and send the 503. */
    static final Duration BUSY_DEADLINE = Duration.ofSeconds(1);
    /** Exchanges that may wait for their 503. */
    static final int BUSY_QUEUE = 64;

    /** True on a thread while it answers an exchange that found the endpoint busy. */
    private static final ThreadLocal<Boolean> BUSY = ThreadLocal.withInitial(() -> false);

    private final ThreadPoolExecutor pool;
    private final ThreadPoolExecutor busyPool;
    private final ScheduledThreadPoolExecutor deadlines;
    private final long deadlineNanos;

    DeadlineExecutor(int threads, int queue, Duration deadline) {
        BlockingQueue<Runnable> waiting = queue == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(queue);
        this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, waiting,
                DaemonThreads.named(n -> "panoptes-admin-" + (n + 1)));
        // An idle endpoint keeps no serving thread.
        pool.allowCoreThreadTimeOut(true);
        this.busyPool = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(BUSY_QUEUE),
                DaemonThreads.named(n -> "panoptes-admin-busy"));
        busyPool.allowCoreThreadTimeOut(true);
        this.deadlines = new ScheduledThreadPoolExecutor(1, DaemonThreads.named(n -> "panoptes-admin-deadline"));
        deadlines.setRemoveOnCancelPolicy(true);
        this.deadlineNanos = deadline.toNanos();
    }

    /** True when the calling handler runs for an exchange that found the endpoint busy: it answers 503. */
    static boolean busy() {
        return BUSY.get();
    }

    @Override
    public void execute(Runnable exchange) {
        try {
            pool.execute(() -> runBefore(exchange, deadlineNanos, false));
            return;
        } catch (RejectedExecutionException full) {
            if (pool.isShutdown()) {
                throw full;
            }
        }
        log.debug("the admin endpoint is busy ({} requests being served, {} waiting): answering 503",
                pool.getActiveCount(), pool.getQueue().size());
        try {
            busyPool.execute(() -> runBefore(exchange, BUSY_DEADLINE.toNanos(), true));
        } catch (RejectedExecutionException alsoFull) {
            if (busyPool.isShutdown()) {
                throw alsoFull;
            }
            runBefore(exchange, BUSY_DEADLINE.toNanos(), true);
        }
    }

    /** Runs {@code exchange} on this thread, interrupted should it still run {@code nanos} from now. */
    private void runBefore(Runnable exchange, long nanos, boolean busy) {
        Thread self = Thread.currentThread();
        Deadline deadline = new Deadline(self);
        ScheduledFuture<?> timer;
        try {
            timer = deadlines.schedule(deadline::pass, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shutDown) {
            return;
        }
        BUSY.set(busy);
        try {
            exchange.run();
        } finally {
            BUSY.set(false);
            deadline.end();
            timer.cancel(false);
            // A deadline that passed as the exchange ended leaves the flag: not the next one's.
            Thread.interrupted();
        }
    }

    /** Stops taking exchanges and interrupts those running (which closes their channels). */
    void shutdownNow() {
        pool.shutdownNow();
        busyPool.shutdownNow();
        deadlines.shutdownNow();
    }

    /** Waits for the threads to end. */
    boolean awaitTermination(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        return pool.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS)
                && busyPool.awaitTermination(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** One exchange's deadline: interrupts its thread once, and only while the exchange runs. */
    private static final class Deadline {
        private final Thread thread;
        private boolean over;

        Deadline(Thread thread) {
            this.thread = thread;
        }

        synchronized void pass() {
            if (!over) {
                over = true;
                log.debug("an admin connection took longer than its deadline to send its request and read the"
                        + " answer; closing it");
                thread.interrupt();
            }
        }

        synchronized void end() {
            over = true;
        }
    }
}
