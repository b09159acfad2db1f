package dev.panoptes.remote;

import dev.panoptes.control.JobId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The jobs of one registered connection, and the capacity rule over them (docs/PROTOCOL.md,
 * "Rules the coordinator keeps", rule 1): dispatches queued for a free slot, jobs assigned and
 * not yet answered, and jobs the coordinator cancelled that the worker has not let go of. A
 * cancelled job keeps its slot until the worker answers it, since it may still be running there.
 *
 * <p><b>Threads.</b> The queue takes dispatches from any thread, and {@link #unavailableSlots()}
 * and {@link #pendingCount()} may be read anywhere; everything else belongs to the connection's
 * selector thread.
 *
 * <p>Allocated when the worker registers: a connection still in its handshake holds none of it.
 */
final class PendingJobs {
    /** What to do with each dispatch a drain takes from the queue. */
    interface Assigner {
        /** Puts the dispatch's frame on the wire; it is pending from then on. */
        void assign(Dispatch d);

        /** The dispatch cannot be assigned here (a second dispatch of a pending job id, say). */
        void refuse(Dispatch d, Refusal why);
    }

    /** Why a dispatch taken from the queue was not assigned. */
    enum Refusal {
        /** The same job id is pending on this connection: a caller bug. */
        DUPLICATE,
        /** The same job id was cancelled here and may still be running: try elsewhere or later. */
        STILL_CANCELLING,
        /** Assigning an earlier dispatch of the same batch failed; this one was never sent. */
        ABORTED
    }

    /** A job cancelled by the coordinator and not yet answered by the worker. */
    record Cancelled(Dispatch dispatch, long cancelledAtMs) {
    }

    private final int capacity;
    private final BlockingQueue<Dispatch> queue;
    /** Cancels requested (counted at once, on the cancelling thread) and not yet let go of. */
    private final AtomicInteger cancelledUnreleased = new AtomicInteger();
    private volatile int pendingCount;

    // ---- selector thread only
    private final Map<JobId, Dispatch> pending = new HashMap<>();
    private final Map<JobId, Cancelled> cancelled = new LinkedHashMap<>();
    private final List<Dispatch> batch = new ArrayList<>();

    PendingJobs(int capacity, int queueCapacity) {
        this.capacity = capacity;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
    }

    // ------------------------------------------------------------------ any thread

    /** Queues without waiting. @return false when the queue is full */
    boolean offer(Dispatch d) {
        return queue.offer(d);
    }

    /** Queues, waiting while the queue is full. */
    void put(Dispatch d) throws InterruptedException {
        queue.put(d);
    }

    /** Takes every queued dispatch out, for a closing connection to fail. Any thread. */
    List<Dispatch> takeQueued() {
        List<Dispatch> out = new ArrayList<>();
        queue.drainTo(out);
        for (Dispatch d : out) {
            released(d);
        }
        return out;
    }

    int capacity() {
        return capacity;
    }

    int queuedCount() {
        return queue.size();
    }

    /** Jobs assigned and not yet answered, not counting cancelled ones. A moment's view. */
    int pendingCount() {
        return pendingCount;
    }

    /** Slots held by cancelled jobs the worker has not let go of. A moment's view. */
    int unavailableSlots() {
        return Math.max(0, cancelledUnreleased.get());
    }

    /** A cancel is about to be attempted on some thread; see {@link DispatchFuture#cancel}. */
    void cancelStarting() {
        cancelledUnreleased.incrementAndGet();
    }

    /** The cancel did not happen (the future was done already). */
    void cancelAbandoned() {
        cancelledUnreleased.decrementAndGet();
    }

    // ------------------------------------------------------------------ selector thread only

    /**
     * Moves queued dispatches to {@code assigner} while a slot is free. Dispatches whose futures
     * are already done (cancelled or failed by their caller) are dropped. Whatever happens, the
     * batch is emptied: a dispatch taken from the queue and not assigned is refused, never lost.
     *
     * @return the number assigned
     */
    int drain(Assigner assigner) {
        int assigned = 0;
        int room;
        while ((room = capacity - pending.size() - cancelled.size()) > 0) {
            if (queue.drainTo(batch, room) == 0) {
                break;
            }
            int i = 0;
            boolean done = false;
            try {
                for (; i < batch.size(); i++) {
                    Dispatch d = batch.get(i);
                    if (d.reply().isDone()) {
                        released(d);
                        continue;
                    }
                    JobId id = d.job().id();
                    if (pending.containsKey(id)) {
                        assigner.refuse(d, Refusal.DUPLICATE);
                    } else if (cancelled.containsKey(id)) {
                        assigner.refuse(d, Refusal.STILL_CANCELLING);
                    } else {
                        assigner.assign(d);
                        pending.put(id, d);
                        assigned++;
                    }
                }
                done = true;
            } finally {
                if (!done) {
                    // A throw mid-batch: what was not put on the wire goes back to its callers.
                    for (int j = i; j < batch.size(); j++) {
                        Dispatch d = batch.get(j);
                        if (pending.get(d.job().id()) != d) {
                            assigner.refuse(d, Refusal.ABORTED);
                        }
                    }
                }
                batch.clear();
                pendingCount = pending.size();
            }
        }
        return assigned;
    }

    /**
     * The worker answered a job.
     *
     * @return the pending dispatch it answers, or null when none is pending under that id (a
     *         late answer, a duplicate, or the answer to a cancelled job, which frees its slot)
     */
    Dispatch answered(JobId id) {
        Dispatch d = pending.remove(id);
        if (d != null) {
            pendingCount = pending.size();
            released(d);
            return d;
        }
        Cancelled c = cancelled.remove(id);
        if (c != null) {
            released(c.dispatch());
        }
        return null;
    }

    /** True when {@code id} was cancelled here and the worker has not answered it yet. */
    boolean isCancelled(JobId id) {
        return cancelled.containsKey(id);
    }

    /**
     * A caller cancelled this future: when its job is pending here, it moves to the cancelled
     * jobs (keeping its slot) and is returned, so that the worker can be told.
     *
     * @return the dispatch to send {@code cancel} for, or null when the job is not on the wire
     *         (still queued: a drain drops it; or answered already)
     */
    Dispatch cancel(DispatchFuture future, long nowMs) {
        Dispatch d = pending.get(future.jobId());
        if (d == null || d.reply() != future) {
            return null;
        }
        pending.remove(future.jobId());
        pendingCount = pending.size();
        cancelled.put(future.jobId(), new Cancelled(d, nowMs));
        return d;
    }

    /** The cancelled job waiting longest for its answer, or null. */
    Cancelled oldestCancelled() {
        Iterator<Cancelled> it = cancelled.values().iterator();
        return it.hasNext() ? it.next() : null;
    }

    int cancelledCount() {
        return cancelled.size();
    }

    /**
     * Empties the table for a closing connection: the dispatches on the wire are returned for
     * the caller to fail; cancelled ones need nothing more (their futures are done).
     */
    List<Dispatch> takeAssigned() {
        List<Dispatch> out = new ArrayList<>(pending.values());
        for (Dispatch d : out) {
            released(d);
        }
        pending.clear();
        pendingCount = 0;
        for (Cancelled c : cancelled.values()) {
            released(c.dispatch());
        }
        cancelled.clear();
        return out;
    }

    /** A dispatch leaves this table for good: if it was cancelled, its slot is free again. Any thread. */
    private void released(Dispatch d) {
        if (d.reply().isCancelled()) {
            cancelledUnreleased.decrementAndGet();
        }
    }
}
