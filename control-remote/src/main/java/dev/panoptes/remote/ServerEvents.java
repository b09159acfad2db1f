package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.Usage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link WorkerServer}'s connections report, and the one thread that tells its
 * {@link WorkerServer.Listener}. The pool is kept in step at once, on the reporting selector
 * thread, so that a worker leaves the pool before any of its jobs fail; the listener is told
 * later, in order, on the server's events thread, so that a slow listener delays only later
 * events, never I/O.
 *
 * <p><b>Threads.</b> The {@link ServerContext.Events} methods are called on selector threads and
 * never block; {@link #failed}, {@link #shutdown()} and {@link #awaitEnd()} on any thread.
 *
 * <p><b>Promises.</b> Rejection reports waiting for a slow listener are bounded by
 * {@link WorkerServer#MAX_WAITING_REJECTIONS}: past that they are counted and logged, not queued.
 * Throttle reports coalesce per worker: one call waits, however many frames arrive. A listener
 * that throws is logged and told of the next event all the same.
 */
final class ServerEvents implements ServerContext.Events {
    private static final Logger log = LoggerFactory.getLogger(ServerEvents.class);

    private final SharedPool pool;
    private final WorkerServer.Listener listener;
    private final ThreadPoolExecutor events;
    private final List<Thread> eventThreads = new CopyOnWriteArrayList<>();
    /**
     * Rejection reports waiting for the listener. A flood of peers that never register must not
     * grow the events queue without bound while the listener is slow: past
     * {@link WorkerServer#MAX_WAITING_REJECTIONS} they are counted instead, and the count is logged.
     */
    private final AtomicInteger rejectionsWaiting = new AtomicInteger();
    private final AtomicLong rejectionsDropped = new AtomicLong();

    ServerEvents(SharedPool pool, WorkerServer.Listener listener, String threadPrefix) {
        this.pool = pool;
        this.listener = listener;
        this.events = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                WorkerServer.daemonThreads(threadPrefix + "events-", eventThreads));
        // Started now, not with the first worker: the server's threads are the same from start to end.
        events.prestartAllCoreThreads();
    }

    @Override
    public void onRegistered(RemoteWorker worker) {
        pool.add(worker);
        tell(() -> listener.onRegistered(worker), "onRegistered", worker.id());
    }

    @Override
    public void onRejected(SocketAddress remote, String reason) {
        if (rejectionsWaiting.incrementAndGet() > WorkerServer.MAX_WAITING_REJECTIONS) {
            rejectionsWaiting.decrementAndGet();
            if (rejectionsDropped.getAndIncrement() == 0) {
                log.warn("worker=- job=- - the server listener is {} rejection reports behind; not telling it of"
                        + " more until it catches up (a flood of connections that never register?)",
                        WorkerServer.MAX_WAITING_REJECTIONS);
            }
            return;
        }
        tell(() -> {
            rejectionsWaiting.decrementAndGet();
            long dropped = rejectionsDropped.getAndSet(0);
            if (dropped > 0) {
                log.warn("worker=- job=- - the server listener was not told of {} rejected connections while it"
                        + " was behind", dropped);
            }
            listener.onRejected(remote, reason);
        }, "onRejected", "-");
    }

    @Override
    public void onDraining(RemoteWorker worker) {
        pool.remove(worker);
    }

    @Override
    public void onLost(RemoteWorker worker, Throwable cause) {
        pool.remove(worker);
        tell(() -> listener.onLost(worker, cause), "onLost", worker.id());
    }

    @Override
    public void onThrottled(RemoteWorker worker, long count) {
        // Coalesced per worker: however many frames arrive while the listener is behind, one
        // call waits, and it reports them all.
        if (worker.throttledUntold.getAndAdd(count) == 0) {
            tell(() -> listener.onThrottled(worker, worker.throttledUntold.getAndSet(0)), "onThrottled",
                    worker.id());
        }
    }

    @Override
    public void onLateSpent(RemoteWorker worker, Job job, Usage usage) {
        // Straight to the pool's late-spend listeners (a scheduler queues it as an event): the
        // server listener has no use for it, and the selector thread does not wait for it.
        pool.spentLate(job, worker, usage);
    }

        /** The server failed as a whole: tells the listener. Any thread. */
    void failed(Throwable cause) {
        tell(() -> listener.onFailed(cause), "onFailed", "-");
    }

    /** Stops taking events; those queued are still told. */
    void shutdown() {
        events.shutdown();
    }

    /** Stops at once, for a server that never started. */
    void shutdownNow() {
        events.shutdownNow();
    }

    /**
     * Waits for the events thread to end after {@link #shutdown()}, warning if it overruns.
     *
     * @return false when interrupted (the flag is then for the caller to restore)
     */
    boolean awaitEnd() {
        return WorkerServer.awaitEnd(events, eventThreads, "server listener calls", "a Listener must not block");
    }

    /** Runs a listener call on the events thread; a throw is logged and forgotten. */
    private void tell(Runnable call, String what, String workerId) {
        try {
            events.execute(() -> {
                try {
                    call.run();
                } catch (RuntimeException e) {
                    log.warn("worker={} job=- - the server listener's {} failed; carrying on", workerId, what, e);
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("worker={} job=- - not telling the listener {}: the server is closed", workerId, what);
        }
    }
}
