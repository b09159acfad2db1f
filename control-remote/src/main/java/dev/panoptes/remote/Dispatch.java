package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A job on its way to a worker, with the future its caller waits on. Made by
 * {@link RemoteWorker#dispatch} on the caller's thread, handed to the {@link ConnectionActor}
 * through its queue, and from then on touched only by the actor's selector thread until the
 * reply is completed.
 *
 * @param job   the job to assign
 * @param reply completed with the worker's outcome, or failed with a
 *              {@link dev.panoptes.control.ControlException}
 */
record Dispatch(Job job, CompletableFuture<JobOutcome> reply) {
    Dispatch {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(reply, "reply");
    }
}
