package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.wire.Message;

import java.net.SocketAddress;

/**
 * The exceptions one connection fails its jobs with. Each names the job, the worker and its
 * address, and is of the type that says whose failure it is (docs/PROTOCOL.md, "Failure
 * scopes"): a job lost on the wire is the moment's, a job never sent is nobody's, a
 * {@code failed} frame is whoever the worker said.
 *
 * <p>Thread-safe: the worker id is set once, at registration, and read anywhere.
 */
final class JobFailures {
    private final SocketAddress remote;
    private volatile String workerId = "-";

    JobFailures(SocketAddress remote) {
        this.remote = remote;
    }

    /** The registered worker's id; "-" before registration. */
    String workerId() {
        return workerId;
    }

    void registered(String id) {
        this.workerId = id;
    }

    /** The job was on the wire when the connection ended: retryable, counting an attempt. */
    WorkerException lost(JobId jobId, Throwable cause) {
        return new WorkerException("worker connection lost: worker " + workerId + " at " + remote
                + " went away before answering job " + jobId + " (" + describe(cause) + "); the job may be sent again",
                cause);
    }

    /** The job never left the coordinator: retryable, and no attempt is counted. */
    DispatchRefusedException notSent(JobId jobId, String why) {
        return new DispatchRefusedException("job " + jobId + " was not sent to worker " + workerId + " at " + remote
                + ": " + why);
    }

    DispatchRefusedException draining(JobId jobId) {
        return notSent(jobId, "it is draining (shutting down) and takes no new jobs");
    }

    /** A dispatch the job table would not assign. */
    ControlException refused(JobId id, PendingJobs.Refusal why, int pendingCount) {
        switch (why) {
            case DUPLICATE:
                return new JobFailedException("job " + id + " is already pending on worker " + workerId + " at "
                        + remote + " (" + pendingCount + " pending): the same job id was dispatched twice to one"
                        + " connection; this second dispatch was refused and the first one goes on");
            default:
                return notSent(id, "assigning the jobs queued with it failed");
        }
    }

    /**
     * What the worker's {@code failed} frame says, as the exception of its scope, carrying the
     * tokens the frame says the job spent ({@link ControlException#spent}).
     */
    ControlException failedFrame(Message.Failed failed) {
        return scoped(failed).addSpent(failed.spent());
    }

    private ControlException scoped(Message.Failed failed) {
        switch (failed.effectiveScope()) {
            case JOB:
                return new JobFailedException("worker " + workerId + " at " + remote + " failed job "
                        + failed.jobId() + " (the job's own failure, not retried): " + failed.error());
            case WORKER:
                // The worker's own words first: they are what a quarantine line shows.
                return new WorkerFaultException("worker " + workerId + " at " + remote + ": " + failed.error());
            default:
                return new WorkerException("worker " + workerId + " at " + remote + " could not complete job "
                        + failed.jobId() + " (retryable): " + failed.error());
        }
    }

    /** A result that does not answer its job: the worker's bug or confusion, retryable elsewhere. */
    WorkerException wrongResult(JobId jobId, IllegalArgumentException why) {
        return new WorkerException("worker " + workerId + " at " + remote + " sent a result that does not answer job "
                + jobId + ": " + why.getMessage() + "; another worker may do better", why);
    }

    static String describe(Throwable cause) {
        String message = cause.getMessage();
        return message == null ? cause.getClass().getSimpleName() : message;
    }
}
