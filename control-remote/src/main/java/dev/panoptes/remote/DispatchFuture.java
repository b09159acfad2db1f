package dev.panoptes.remote;

import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;

/**
 * The future {@link RemoteWorker#dispatch} returns. Cancelling it (a scheduler does when the
 * attempt's deadline passes) asks the worker to stop the job: the connection sends a
 * {@code cancel} frame, and the job keeps its slot, counted in
 * {@link RemoteWorker#unavailableSlots()}, until the worker answers it.
 *
 * <p><b>Who decides.</b> A dispatch ends exactly one way, and the first to claim it decides:
 * the connection's selector thread {@linkplain #settle() settles} it when it reads the worker's
 * answer or fails the job (it completes the future later, after its pass), and a caller's
 * {@link #cancel} claims it for the cancel. The loser stands aside: a cancel that comes after the
 * answer was read returns false and the answer arrives; an answer read after the cancel is
 * dropped and only frees the slot. So a slot is counted as held by a cancel exactly when a cancel
 * won, and freed exactly once, when the job table lets go of that dispatch.
 *
 * <p>Thread-safe, as every {@link CompletableFuture}.
 */
final class DispatchFuture extends CompletableFuture<JobOutcome> {
    private static final int LIVE = 0;
    private static final int SETTLED = 1;
    private static final int CANCELLED = 2;
    /** The claim as a field of the future itself, not an AtomicInteger beside it: one object less per job. */
    private static final VarHandle CLAIM;

    static {
        try {
            CLAIM = MethodHandles.lookup().findVarHandle(DispatchFuture.class, "claim", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final JobAssignments assignments;
    private final JobId jobId;
    /** LIVE (0, the default) until claimed, then SETTLED or CANCELLED; changed only by compare-and-set through {@link #CLAIM}. */
    private volatile int claim;

    DispatchFuture(JobAssignments assignments, JobId jobId) {
        this.assignments = assignments;
        this.jobId = jobId;
    }

    JobId jobId() {
        return jobId;
    }

    /**
     * Claims the dispatch for an answer or a failure about to be delivered. Any thread; in
     * practice the selector thread, or the caller's for a dispatch that never reached a table.
     *
     * @return true when the caller now owns the future's completion; false when a cancel won
     *         (the future is cancelled, or about to be, and its slot is counted as held)
     */
    boolean settle() {
        return CLAIM.compareAndSet(this, LIVE, SETTLED);
    }

    /**
     * True when a cancel claimed this dispatch: its slot is counted in
     * {@link PendingJobs#unavailableSlots()} until the table lets go of it. Once true, stays true.
     */
    boolean cancelClaimed() {
        return claim == CANCELLED;
    }

    /**
     * Cancels the attempt unless its answer or failure was claimed first.
     *
     * @return true when this call cancelled it; false when it was settled or cancelled already
     *         (a settled one completes soon with what the worker said, or how the job failed)
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        PendingJobs jobs = assignments.jobs();
        // Counted before the claim is visible, so that whoever sees the claim sees it counted.
        jobs.cancelStarting();
        if (!CLAIM.compareAndSet(this, LIVE, CANCELLED)) {
            jobs.cancelAbandoned();
            return false;
        }
        super.cancel(mayInterruptIfRunning);
        assignments.onCancelRequested(this);
        return true;
    }
}
