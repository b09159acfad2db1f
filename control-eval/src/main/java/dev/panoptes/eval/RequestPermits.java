package dev.panoptes.eval;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A worker's budget of model requests in flight: a fixed number of permits that every job the
 * worker holds draws on, one per vignette whose call is open. Nobody blocks for a permit: a job
 * that finds none {@linkplain #acquire queues a waiter} and is called back when one is released,
 * on the releasing thread. Waiters are served in the order of their jobs' starts, so the jobs a
 * worker took first finish first instead of all of them finishing late together.
 *
 * <p>Why a pool of its own rather than a {@link java.util.concurrent.Semaphore}: a worker's jobs
 * run on the model client's I/O threads, which may never block, and a call's completion hands
 * its permit straight to the next job waiting.
 *
 * <p>Thread-safe: any thread acquires, releases and cancels. A grant's callback never runs inside
 * the pool's lock, and a grant made while the same thread is already running one is run after
 * it, so a chain of calls that answer at once cannot grow the stack.
 */
public final class RequestPermits {
    private static final Logger log = LoggerFactory.getLogger(RequestPermits.class);

    /** Grants to run on this thread once the one running returns; null when none is running. */
    private static final ThreadLocal<ArrayDeque<Runnable>> GRANTING = new ThreadLocal<>();

    private final int permits;
    /** Guarded by this. */
    private int available;
    /** Guarded by this. */
    private final PriorityQueue<Waiter> waiting =
            new PriorityQueue<>(Comparator.comparingLong((Waiter w) -> w.order).thenComparingLong(w -> w.seq));
    /** Guarded by this. */
    private long seq;

    /**
     * @param permits the most requests in flight at once, at least 1
     * @throws IllegalArgumentException when {@code permits} is below 1
     */
    public RequestPermits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("a worker needs at least 1 request in flight, got " + permits);
        }
        this.permits = permits;
        this.available = permits;
    }

    /** The budget: the most requests in flight at once. */
    public int permits() {
        return permits;
    }

    /** Permits taken now (requests in flight, or about to be). Any thread; a snapshot. */
    public synchronized int inUse() {
        return permits - available;
    }

    /**
     * Takes a permit if one is free; else queues {@code onGranted}, which is called, never from
     * within this call, once a permit is released for it: the caller then holds that permit.
     *
     * @param order     where the waiter stands among others (lower first): its job's start
     * @param onGranted what to run, on the releasing thread, when the permit is granted; must not throw
     * @return null when a permit was taken at once (the caller holds it), else the queued waiter
     *         for {@link #cancel}
     */
    public synchronized Waiter acquire(long order, Runnable onGranted) {
        if (available > 0) {
            available--;
            return null;
        }
        Waiter w = new Waiter(order, seq++, onGranted);
        waiting.add(w);
        return w;
    }

    /**
     * Withdraws a waiter that has not been granted yet.
     *
     * @return true when it was withdrawn (it will never be called); false when its permit was
     *         already granted (its callback runs, or ran, and it holds the permit)
     */
    public synchronized boolean cancel(Waiter waiter) {
        return waiting.remove(waiter);
    }

    /** Gives a permit back: to the first waiter, whose callback runs on this thread, or to the pool. */
    public void release() {
        Waiter next;
        synchronized (this) {
            next = waiting.poll();
            if (next == null) {
                if (available == permits) {
                    throw new IllegalStateException("released a permit that was not taken (" + permits + " free)");
                }
                available++;
                return;
            }
        }
        grant(next.onGranted);
    }

    /** Runs a grant, or queues it behind the one this thread is running. */
    private static void grant(Runnable onGranted) {
        ArrayDeque<Runnable> pending = GRANTING.get();
        if (pending != null) {
            pending.add(onGranted);
            return;
        }
        pending = new ArrayDeque<>();
        GRANTING.set(pending);
        try {
            for (Runnable r = onGranted; r != null; r = pending.poll()) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    log.error("a request permit's grant failed; the permit stays with its waiter", e);
                }
            }
        } finally {
            GRANTING.remove();
        }
    }

    @Override
    public synchronized String toString() {
        return "RequestPermits[" + (permits - available) + " of " + permits + " in use, " + waiting.size()
                + " waiting]";
    }

    /** A queued wish for a permit; identity matters, nothing else. */
    public static final class Waiter {
        private final long order;
        private final long seq;
        private final Runnable onGranted;

        private Waiter(long order, long seq, Runnable onGranted) {
            this.order = order;
            this.seq = seq;
            this.onGranted = onGranted;
        }
    }
}
