package dev.panoptes.remote;

import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;

import java.util.concurrent.CompletableFuture;

/**
 * The future {@link RemoteWorker#dispatch} returns. Cancelling it (a scheduler does when the
 * attempt's deadline passes) asks the worker to stop the job: the connection sends a
 * {@code cancel} frame, and the job keeps its slot, counted in
 * {@link RemoteWorker#unavailableSlots()}, until the worker answers it.
 *
 * <p>Thread-safe, as every {@link CompletableFuture}.
 */
final class DispatchFuture extends CompletableFuture<JobOutcome> {
    private final ConnectionActor actor;
    private final JobId jobId;

    DispatchFuture(ConnectionActor actor, JobId jobId) {
        this.actor = actor;
        this.jobId = jobId;
    }

    JobId jobId() {
        return jobId;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        // Counted before the future is done, so that the selector thread, which uncounts a
        // cancelled job when it lets go of it, never sees it done and not yet counted.
        actor.jobs().cancelStarting();
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            actor.onCancelRequested(this);
        } else {
            actor.jobs().cancelAbandoned();
        }
        return cancelled;
    }
}
