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
 * <p>The frame is let go of once it is on the connection's outgoing buffer ({@link #takeFrame}):
 * a dispatch stays in its job table until the worker answers, and with tens of thousands of jobs
 * in flight their frames, kept, were a large part of what every young collection had to copy.
 * Identity is the object's: two dispatches of the same job are different dispatches.
 */
final class Dispatch {
    private final Job job;
    private final DispatchFuture reply;
    /** The whole {@code assign} frame, length prefix included; null once taken. Selector thread after the hand-off. */
    private byte[] frame;

    /**
     * @param job   the job to assign
     * @param frame the whole {@code assign} frame, length prefix included; never modified
     * @param reply completed with the worker's outcome, or failed with a
     *              {@link dev.panoptes.control.ControlException}
     */
    Dispatch(Job job, byte[] frame, DispatchFuture reply) {
        this.job = Objects.requireNonNull(job, "job");
        this.frame = Objects.requireNonNull(frame, "frame");
        this.reply = Objects.requireNonNull(reply, "reply");
    }

    Job job() {
        return job;
    }

    DispatchFuture reply() {
        return reply;
    }

    /**
     * The frame, to be put on the wire; the dispatch keeps no reference to it after this.
     * Selector thread.
     *
     * @throws IllegalStateException when it was taken already: a dispatch is assigned once
     */
    byte[] takeFrame() {
        byte[] f = frame;
        if (f == null) {
            throw new IllegalStateException("the assign frame of job " + job.id() + " was sent already: a dispatch"
                    + " is assigned once");
        }
        frame = null;
        return f;
    }

    @Override
    public String toString() {
        return "Dispatch[job=" + job.id() + ", sent=" + (frame == null) + "]";
    }
}
