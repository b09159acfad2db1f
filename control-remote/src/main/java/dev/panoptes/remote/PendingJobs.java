package dev.panoptes.remote;

import dev.panoptes.control.JobId;

import java.util.ArrayDeque;
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
 * not yet answered, jobs the coordinator cancelled that the worker has not let go of, and
 * redeliveries parked behind a cancelled attempt of the same job. A cancelled job keeps its slot
 * until the worker answers it, since it may still be running there.
 *
 * <p><b>One owner per dispatch.</b> Every dispatch is in exactly one place here (queued, pending,
 * cancelled, parked) until it leaves for good, and it leaves once: {@link #released} is the only
 * place a cancel's slot is uncounted. Who completes its future is decided by its
 * {@link DispatchFuture} claim: the table completes (through its callers) only what it settled,
 * and a dispatch whose cancel won is only let go of. So "answered", "cancelled" and "released"
 * cannot be counted twice or not at all, whatever the order in which an answer, a cancel and a
 * close arrive.
 *
 * <p><b>A redelivery meeting its own cancel.</b> A scheduler that cancels an attempt and sends
 * the job again at once may reach this connection before the cancel's task does, or while the
 * worker still holds the cancelled attempt. The new dispatch is then parked: it waits, holding no
 * slot, until the worker lets go of the old one, and is assigned first after that; if the
 * connection closes meanwhile, it fails as never sent (retryable, no attempt spent).
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

        /** The dispatch cannot be assigned here; the table settled it, so its future is the caller's to fail. */
        void refuse(Dispatch d, Refusal why);

        /** A pending dispatch whose cancel had not been acted on yet moved to the cancelled jobs: tell the worker. */
        void cancelled(Dispatch d);
    }

    /** Why a dispatch taken from the queue was not assigned. */
    enum Refusal {
        /** The same job id is pending, and not cancelled, on this connection: a caller bug. */
        DUPLICATE,
        /** Assigning an earlier dispatch of the same batch failed; this one was never sent. */
        ABORTED
    }

    /** A job cancelled by the coordinator and not yet answered by the worker. */
    record Cancelled(Dispatch dispatch, long cancelledAtMs) {
    }

    private final int capacity;
    private final BlockingQueue<Dispatch> queue;
    /** Cancels claimed (counted on the cancelling thread, before the claim) and not yet let go of. */
    private final AtomicInteger cancelledUnreleased = new AtomicInteger();
    private volatile int pendingCount;

    // ---- selector thread only
    private final Map<JobId, Dispatch> pending = new HashMap<>();
    private final Map<JobId, Cancelled> cancelled = new LinkedHashMap<>();
    /** Redeliveries waiting for the worker to let go of a cancelled attempt of the same job. */
    private final Map<JobId, Dispatch> parked = new HashMap<>();
    /** Parked dispatches whose old attempt is gone: assigned before anything queued. */
    private final ArrayDeque<Dispatch> unparked = new ArrayDeque<>();
    private final List<Dispatch> batch = new ArrayList<>();
    /** The dispatch whose cancel won that the last {@link #answered} let go of, or null. */
    private Dispatch lastCancelledAnswered;

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

    /**
     * Takes every queued dispatch out, for a closing or draining connection to fail. Any thread.
     *
     * @return the dispatches this call settled: their futures are the caller's to fail
     */
    List<Dispatch> takeQueued() {
        List<Dispatch> taken = new ArrayList<>();
        queue.drainTo(taken);
        return settledOf(taken);
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

    /** A cancel is about to claim a dispatch on some thread; see {@link DispatchFuture#cancel}. */
    void cancelStarting() {
        cancelledUnreleased.incrementAndGet();
    }

    /** The cancel did not claim it (it was settled or cancelled already). */
    void cancelAbandoned() {
        cancelledUnreleased.decrementAndGet();
    }

    // ------------------------------------------------------------------ selector thread only

    /**
     * Moves parked, then queued, dispatches to {@code assigner} while a slot is free. Dispatches
     * whose futures are already done (cancelled or failed by their caller) are dropped. A
     * dispatch of a job whose earlier attempt was cancelled here is parked until the worker lets
     * go of that attempt. Whatever happens, the batch is emptied: a dispatch taken from the queue
     * and neither assigned nor parked is refused, never lost.
     *
     * @param nowMs the loop's time, stamped on a cancel the drain acts on
     * @return the number assigned
     */
    int drain(Assigner assigner, long nowMs) {
        int assigned = assignUnparked(assigner);
        int room;
        while ((room = capacity - pending.size() - cancelled.size()) > 0) {
            if (queue.drainTo(batch, room) == 0) {
                break;
            }
            int i = 0;
            boolean done = false;
            try {
                for (; i < batch.size(); i++) {
                    if (place(batch.get(i), assigner, nowMs)) {
                        assigned++;
                    }
                }
                done = true;
            } finally {
                if (!done) {
                    // A throw mid-batch: what was not put on the wire goes back to its callers.
                    for (int j = i; j < batch.size(); j++) {
                        Dispatch d = batch.get(j);
                        JobId id = d.job().id();
                        if (pending.get(id) != d && parked.get(id) != d) {
                            refuse(d, Refusal.ABORTED, assigner);
                        }
                    }
                }
                batch.clear();
                pendingCount = pending.size();
            }
        }
        return assigned;
    }

    /** Assigns, parks, drops or refuses one dispatch taken from the queue. @return true when assigned */
    private boolean place(Dispatch d, Assigner assigner, long nowMs) {
        if (d.reply().isDone() || d.reply().cancelClaimed()) {
            released(d);
            return false;
        }
        JobId id = d.job().id();
        Dispatch earlier = pending.get(id);
        if (earlier != null && earlier.reply().cancelClaimed()) {
            // Its cancel's task has not run yet: act on it now, then wait behind it.
            cancelled.put(id, new Cancelled(pending.remove(id), nowMs));
            pendingCount = pending.size();
            assigner.cancelled(earlier);
            earlier = null;
        }
        if (earlier != null) {
            refuse(d, Refusal.DUPLICATE, assigner);
            return false;
        }
        if (cancelled.containsKey(id)) {
            Dispatch before = parked.get(id);
            if (before != null && !before.reply().isDone() && !before.reply().cancelClaimed()) {
                refuse(d, Refusal.DUPLICATE, assigner);
                return false;
            }
            parked.put(id, d);
            if (before != null) {
                // The redelivery it replaces was given up on by its caller.
                released(before);
            }
            return false;
        }
        assigner.assign(d);
        pending.put(id, d);
        return true;
    }

    private int assignUnparked(Assigner assigner) {
        int assigned = 0;
        Dispatch d;
        while (capacity - pending.size() - cancelled.size() > 0 && (d = unparked.poll()) != null) {
            if (d.reply().isDone() || d.reply().cancelClaimed()) {
                released(d);
                continue;
            }
            assigner.assign(d);
            pending.put(d.job().id(), d);
            assigned++;
        }
        pendingCount = pending.size();
        return assigned;
    }

    private void refuse(Dispatch d, Refusal why, Assigner assigner) {
        if (d.reply().settle()) {
            assigner.refuse(d, why);
        }
        released(d);
    }

    /**
     * The worker answered a job.
     *
     * @return the pending dispatch it answers, settled (its future is the caller's to complete),
     *         or null when none is pending under that id, or its cancel won: a late answer, a
     *         duplicate, or the answer to a cancelled job, which frees its slot
     */
    Dispatch answered(JobId id) {
        lastCancelledAnswered = null;
        Dispatch d = pending.remove(id);
        if (d != null) {
            pendingCount = pending.size();
            boolean settled = d.reply().settle();
            released(d);
            if (!settled) {
                lastCancelledAnswered = d;
            }
            return settled ? d : null;
        }
        Cancelled c = cancelled.remove(id);
        if (c != null) {
            lastCancelledAnswered = c.dispatch();
            released(c.dispatch());
            Dispatch waiting = parked.remove(id);
            if (waiting != null) {
                unparked.add(waiting);
            }
        }
        return null;
    }

    /**
     * When the last {@link #answered} returned null because the job's cancel had won (it was
     * cancelled here, or its cancel was pending), that cancelled dispatch; else null (the answer
     * was used, or was for no job here). Lets the caller report what a late answer spent with one
     * look-up of the job instead of two.
     */
    Dispatch lastCancelledAnswered() {
        return lastCancelledAnswered;
    }

    /**
     * A caller cancelled this future: when its job is pending here, it moves to the cancelled
     * jobs (keeping its slot) and is returned, so that the worker can be told; when it is parked,
     * it leaves at once (it never reached the worker).
     *
     * @return the dispatch to send {@code cancel} for, or null when the job is not on the wire
     *         (still queued: a drain drops it; parked; answered already; or acted on already)
     */
    Dispatch cancel(DispatchFuture future, long nowMs) {
        JobId id = future.jobId();
        Dispatch waiting = parked.get(id);
        if (waiting != null && waiting.reply() == future) {
            parked.remove(id);
            released(waiting);
            return null;
        }
        Dispatch d = pending.get(id);
        if (d == null || d.reply() != future) {
            return null;
        }
        pending.remove(id);
        pendingCount = pending.size();
        cancelled.put(id, new Cancelled(d, nowMs));
        return d;
    }

    /**
     * The future of the redelivery of {@code id} parked behind its cancelled attempt, or null
     * when none is parked. Selector thread; for tests that check it is assigned as soon as the
     * worker lets go of that attempt.
     */
    DispatchFuture parkedFor(JobId id) {
        Dispatch d = parked.get(id);
        return d == null ? null : d.reply();
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
     * What {@link #unavailableSlots()} should say, counted from the table itself: every dispatch
     * it holds whose cancel won. Selector thread; for tests that check the count never drifts.
     */
    int slotsHeldByCancels() {
        int held = cancelled.size();
        held += countCancelClaimed(pending.values());
        held += countCancelClaimed(queue);
        held += countCancelClaimed(parked.values());
        held += countCancelClaimed(unparked);
        return held;
    }

    private static int countCancelClaimed(Iterable<Dispatch> dispatches) {
        int n = 0;
        for (Dispatch d : dispatches) {
            if (d.reply().cancelClaimed()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Empties the table for a closing connection.
     *
     * @return the dispatches on the wire that this call settled, for the caller to fail as lost;
     *         cancelled ones need nothing more (their futures are done)
     */
    List<Dispatch> takeAssigned() {
        List<Dispatch> onTheWire = new ArrayList<>(pending.values());
        pending.clear();
        pendingCount = 0;
        for (Cancelled c : cancelled.values()) {
            released(c.dispatch());
        }
        cancelled.clear();
        return settledOf(onTheWire);
    }

    /**
     * Takes the parked dispatches out, for a closing or draining connection to fail as never sent.
     *
     * @return the ones this call settled
     */
    List<Dispatch> takeParked() {
        List<Dispatch> waiting = new ArrayList<>(parked.values());
        waiting.addAll(unparked);
        parked.clear();
        unparked.clear();
        return settledOf(waiting);
    }

    /** Lets go of each dispatch, keeping those this call settled. */
    private List<Dispatch> settledOf(List<Dispatch> leaving) {
        List<Dispatch> settled = new ArrayList<>(leaving.size());
        for (Dispatch d : leaving) {
            if (d.reply().settle()) {
                settled.add(d);
            }
            released(d);
        }
        return settled;
    }

    /** The table's contents by job id, for failure messages; selector thread. */
    @Override
    public String toString() {
        return "PendingJobs[capacity=" + capacity + ", pending=" + pending.keySet() + ", cancelled=" + cancelled.keySet()
                + ", parked=" + parked.keySet() + ", unparked=" + unparked.size() + ", queued=" + queue.size()
                + ", unavailableSlots=" + cancelledUnreleased.get() + "]";
    }

    /** A dispatch leaves this table for good: if a cancel claimed it, its slot is free again. Any thread. */
    private void released(Dispatch d) {
        if (d.reply().cancelClaimed()) {
            cancelledUnreleased.decrementAndGet();
        }
    }
}
