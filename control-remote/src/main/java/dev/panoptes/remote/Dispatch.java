package dev.panoptes.remote;

import dev.panoptes.control.Job;

import java.util.Objects;

/**
 * A job on its way to a worker: the job, its {@code assign} frame (encoded on the caller's
 * thread, so that a job that cannot be encoded never reaches a connection) and the future its
 * caller waits on. Made by {@link RemoteWorker#dispatch}, handed to the {@link ConnectionActor}
 * through its queue, and from then on touched only by the actor's selector thread until the
 * reply is completed.
 *
 * @param job   the job to assign
 * @param frame the whole {@code assign} frame, length prefix included; never modified
 * @param reply completed with the worker's outcome, or failed with a
 *              {@link dev.panoptes.control.ControlException}
 */
record Dispatch(Job job, byte[] frame, DispatchFuture reply) {
    Dispatch {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(frame, "frame");
        Objects.requireNonNull(reply, "reply");
    }
}
