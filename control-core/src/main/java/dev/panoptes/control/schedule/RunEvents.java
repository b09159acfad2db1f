package dev.panoptes.control.schedule;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What happened on other threads, for the run to act on, in the order each thread posted it.
 *
 * <p>Unlike a {@link java.util.concurrent.BlockingQueue}, the run's thread waits for an event
 * without taking it ({@link #await}), and takes events only while it holds the run's turn (see
 * {@link SchedulerRun}): a thread that takes the turn after it finds every event queued before
 * still queued or already run, never one taken and not yet run by a thread waiting for the turn.
 * That keeps each poster's events in order when the thread that delivers answers runs the run
 * itself.
 *
 * <p>Threads: {@link #add}, {@link #isEmpty} and {@link #size} from any thread; {@link #poll}
 * under the run's turn (or by its only thread once the run's loop ended); {@link #await} by one
 * thread at a time, the run's own.
 */
final class RunEvents {
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    /** The thread parked in {@link #await}, or null: whoever adds unparks it. */
    private volatile Thread waiter;
    /**
     * Counts the adds and wakes that are to wake the waiter (not {@link #addQuietly}): a waiter
     * woken by anything else (a spurious return of park, a permit left by an earlier unpark) parks
     * again unless it changed, so that quiet events wait as promised. Incremented after the queue
     * changes and before the waiter is read.
     */
    private final AtomicLong wakes = new AtomicLong();

    /** Queues an event and wakes the thread waiting for one, if any. Never blocks. Any thread. */
    void add(Runnable event) {
        queue.add(event);
        wakeWaiter();
    }

    /**
     * Queues an event without waking the waiting thread: for an event that can wait until the
     * waiter wakes for another reason or its own timeout, or a host takes the run's turn. Any thread.
     */
    void addQuietly(Runnable event) {
        queue.add(event);
    }

    /** Wakes the thread waiting in {@link #await}, if any. Any thread. */
    void wakeWaiter() {
        // After the add, as the waiter sets itself before it looks: one of the two sees the other.
        wakes.incrementAndGet();
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** The oldest event, taken, or null. */
    Runnable poll() {
        return queue.poll();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Events queued; counts them (for tests and checks, not for hot paths). */
    int size() {
        return queue.size();
    }

    /** True while a thread is parked in {@link #await}; for tests. */
    boolean awaited() {
        return waiter != null;
    }

    /**
     * Returns at once when an event is queued, else once an event is added other than quietly
     * (or {@link #wakeWaiter} is called), or {@code nanos} have passed; takes nothing.
     *
     * @throws InterruptedException when the calling thread is interrupted (its flag is cleared)
     */
    void await(long nanos) throws InterruptedException {
        if (!queue.isEmpty()) {
            return;
        }
        long deadline = System.nanoTime() + nanos;
        waiter = Thread.currentThread();
        try {
            long seen = wakes.get();
            if (!queue.isEmpty()) {
                return;
            }
            while (wakes.get() == seen) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for the run's events");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiter = null;
        }
    }
}
