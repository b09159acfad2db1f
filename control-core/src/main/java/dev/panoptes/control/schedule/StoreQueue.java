package dev.panoptes.control.schedule;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The writes of a {@link StoreWriter} that its writing thread has not taken yet, and that thread's
 * lifecycle: when it starts, waits for writes, lingers for a batch to fill (group commit), drains at
 * the end of a run, is abandoned, or gives up. The writer owns what is done with a batch once taken
 * (the store calls, the retries, the store's up or down state).
 *
 * <p>Threads: {@link #add}, {@link #finish}, {@link #working}, {@link #lingering},
 * {@link #beginInline}, {@link #endInline} and {@link #abandon} are called on the scheduler's
 * thread; {@link #take}, {@link #enterStoreCall}, {@link #leaveStoreCall}, {@link #pause},
 * {@link #stopAbandoned} and {@link #giveUp} on the writing thread (the scheduler's, for an inline
 * writer). Every field is guarded by one lock, on which both wait.
 */
final class StoreQueue {
    /** The writer's logger: what this logs is the writer's doing, and operators filter on its name. */
    private static final Logger log = LoggerFactory.getLogger(StoreWriter.class);

    private enum Mode { RUNNING, DRAINING, ABANDONED }

    private final Consumer<Runnable> post;
    private final boolean inline;
    private final long lingerNanos;
    private final Object lock = new Object();
    /** Writes not taken by the writer's thread yet, oldest first; guarded by {@link #lock}. */
    private final ArrayDeque<StoreWriter.Write> queue = new ArrayDeque<>();
    /** Guarded by {@link #lock}. */
    private Mode mode = Mode.RUNNING;
    /** The writer's thread waits for writes; guarded by {@link #lock}. */
    private boolean idle;
    /** The writer's thread waits for a batch to fill ({@link #lingerForMore}); guarded by {@link #lock}. */
    private boolean lingering;
    /**
     * When the oldest write in {@link #queue} was queued ({@link System#nanoTime}); far in the past
     * when writes were left behind by a full batch, which then do not wait. Guarded by {@link #lock}.
     */
    private long oldestQueuedAt;
    /** A writer's thread is on (or about to start); guarded by {@link #lock}. */
    private boolean working;
    /**
     * Every write the run will make is queued: nothing more will come to share a commit, so the
     * writer's thread stops lingering ({@link #lastWritesQueued}). Guarded by {@link #lock}.
     */
    private boolean lastQueued;
    /** The writer gave up; nothing is written any more; guarded by {@link #lock}. */
    private boolean gaveUp;
    /**
     * The writer's thread is inside a call of the store, or has yet to account for what it did:
     * {@link #abandon} waits for it to end. Guarded by {@link #lock}.
     */
    private boolean inStoreCall;

    /**
     * @param post        hands an event to the scheduler's thread; must not block
     * @param inline      the writes are done on the scheduler's thread: no lingering for a batch
     * @param lingerNanos how long the oldest write waits for others to share its commit
     */
    StoreQueue(Consumer<Runnable> post, boolean inline, long lingerNanos) {
        this.post = post;
        this.inline = inline;
        this.lingerNanos = lingerNanos;
    }

    /**
     * Starts an inline writer's round of writes, unless there is nothing to write or it is over.
     *
     * @return false when there is nothing to write (queue empty, gave up or abandoned)
     */
    boolean beginInline() {
        assert inline;
        synchronized (lock) {
            if (queue.isEmpty() || gaveUp || mode == Mode.ABANDONED) {
                return false;
            }
            mode = Mode.DRAINING;
            working = true;
            return true;
        }
    }

    /** Ends an inline writer's round of writes: the next write waits for the next round. */
    void endInline() {
        synchronized (lock) {
            if (mode == Mode.DRAINING) {
                mode = Mode.RUNNING;
            }
        }
    }

    /**
     * Queues a write after every one before it.
     *
     * @return true when the caller is to start a writer's thread (none is on, and the writer is not over)
     */
    boolean add(StoreWriter.Write write) {
        synchronized (lock) {
            if (queue.isEmpty()) {
                oldestQueuedAt = System.nanoTime();
            }
            queue.addLast(write);
            if (idle || lingering && queue.size() >= StoreWriter.BATCH) {
                lock.notifyAll();
            }
            if (!inline && !working && !gaveUp && mode != Mode.ABANDONED) {
                working = true;
                return true;
            }
            return false;
        }
    }

    /** True while the writer's thread waits for more writes to share a commit. */
    boolean lingering() {
        synchronized (lock) {
            return lingering;
        }
    }

    /**
     * Says that every write the run will make is queued (its last answers, which the end of the
     * run waits for): the writer's thread no longer lingers for more, now or later (a refused
     * answer's failure is not waited for either), and keeps running until {@link #finish}.
     * Returns at once.
     */
    void lastWritesQueued() {
        synchronized (lock) {
            lastQueued = true;
            lock.notifyAll();
        }
    }

    /** Lets the writer's thread end once the queue is empty; returns at once. */
    void finish() {
        synchronized (lock) {
            if (mode == Mode.RUNNING) {
                mode = Mode.DRAINING;
            }
            lock.notifyAll();
        }
    }

    /** True while a writer's thread has writes to do or may still post events about them. */
    boolean working() {
        synchronized (lock) {
            return working;
        }
    }

    /**
     * Ends the writer: lets the writer's thread write until {@code deadline} ({@link System#nanoTime})
     * while the store is up, then marks the queue abandoned and waits for a store call in progress
     * to be accounted for, however long that takes.
     *
     * @param down true while the store is down (then the writer is not waited for)
     * @return true when the calling thread was interrupted meanwhile (the caller restores it)
     */
    boolean abandon(long deadline, BooleanSupplier down) {
        boolean interrupted = false;
        synchronized (lock) {
            if (mode == Mode.RUNNING) {
                mode = Mode.DRAINING;
                lock.notifyAll();
            }
            long left;
            while (working && !down.getAsBoolean() && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                    break;
                }
            }
            mode = Mode.ABANDONED;
            lock.notifyAll();
            if (inStoreCall) {
                log.info("waiting for the result store to answer the write in progress, so that what this run"
                        + " reports stored is what the store holds");
            }
            while (inStoreCall) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        return interrupted;
    }

    /**
     * Waits for writes and moves up to {@link StoreWriter#BATCH} of them, oldest first, into
     * {@code batch}; a writer with its own thread first lingers for a batch to fill.
     *
     * @return false when the writer's thread is to end (drained or abandoned): its last event is posted
     */
    boolean take(List<StoreWriter.Write> batch) throws InterruptedException {
        synchronized (lock) {
            while (queue.isEmpty() && mode == Mode.RUNNING) {
                idle = true;
                lock.wait();
            }
            idle = false;
            if (!inline) {
                lingerForMore();
            }
            if (mode == Mode.ABANDONED || queue.isEmpty()) {
                // Posted before working is cleared, under the lock: whoever sees it cleared
                // finds every event of this thread queued. It also wakes a scheduler waiting
                // for the last events of a finished run.
                post.accept(() -> { });
                working = false;
                lock.notifyAll();
                return false;
            }
            for (int i = 0; i < StoreWriter.BATCH && !queue.isEmpty(); i++) {
                batch.add(queue.pollFirst());
            }
            // What a full batch left behind has waited already: the next batch takes it at once.
            oldestQueuedAt = System.nanoTime() - lingerNanos;
            return true;
        }
    }

    /** The writer gives up: {@code event} is its last, and nothing is written any more. */
    void giveUp(Runnable event) {
        synchronized (lock) {
            // Queued before working is cleared, as when the thread ends normally.
            post.accept(event);
            gaveUp = true;
            working = false;
            inStoreCall = false;
            lock.notifyAll();
        }
    }

    /**
     * Marks the start of a store call, unless the writer was abandoned.
     *
     * @return false when abandoned: no store call may start
     */
    boolean enterStoreCall() {
        synchronized (lock) {
            if (mode == Mode.ABANDONED) {
                return false;
            }
            inStoreCall = true;
            return true;
        }
    }

    /** Marks the end of a store call, once what it did is accounted for. */
    void leaveStoreCall() {
        synchronized (lock) {
            inStoreCall = false;
            lock.notifyAll();
        }
    }

    /** The writer's thread ends, abandoned. */
    void stopAbandoned() {
        synchronized (lock) {
            post.accept(() -> { });
            working = false;
            lock.notifyAll();
        }
    }

    /**
     * Group commit: waits, under the lock, until a whole batch is queued or the oldest write has
     * waited the linger ({@link StoreWriter#LINGER_NANOS} by default), so that answers arriving close together share one commit.
     * A draining or abandoned writer does not wait, nor one whose run has queued its last writes:
     * the end of a run is not held back.
     */
    private void lingerForMore() throws InterruptedException {
        long until = oldestQueuedAt + lingerNanos;
        long left;
        while (mode == Mode.RUNNING && !lastQueued && queue.size() < StoreWriter.BATCH
                && (left = until - System.nanoTime()) > 0) {
            lingering = true;
            TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
        lingering = false;
    }

    /** Waits before the next attempt. @return false when abandoned meanwhile */
    boolean pause(long nanos) throws InterruptedException {
        long until = System.nanoTime() + nanos;
        synchronized (lock) {
            long left;
            while (mode != Mode.ABANDONED && (left = until - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            if (mode == Mode.ABANDONED) {
                working = false;
                lock.notifyAll();
                return false;
            }
            return true;
        }
    }
}
