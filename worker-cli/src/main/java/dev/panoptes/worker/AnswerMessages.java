package dev.panoptes.worker;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * What a worker says about a finished job: a {@code result}, or a {@code failed} whose
 * {@code scope} says whose failure it is (the runner's {@link ControlException#scope()}, else
 * retryable), and the log line of that answer.
 *
 * <p><b>Threads.</b> Holds only the worker's id: any thread, though the session calls it on its
 * I/O thread alone. It logs under the session's category, where the rest of a connection's story
 * is told.
 */
final class AnswerMessages {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);

    private final String workerId;

    AnswerMessages(String workerId) {
        this.workerId = workerId;
    }

    /** The answer to {@code job}, from what its future completed with. */
    Message answerFor(HeldJob job, JobOutcome outcome, Throwable error) {
        if (error == null) {
            if (outcome == null) {
                return Message.Failed.of(job.id, "the job runner of worker " + workerId + " returned no outcome for"
                        + " job " + job.id, FailureScope.TRANSIENT);
            }
            if (!outcome.jobId().equals(job.id)) {
                return Message.Failed.of(job.id, "worker " + workerId + " produced a wrong outcome: it answers job "
                        + outcome.jobId(), FailureScope.TRANSIENT);
            }
            return new Message.Result(outcome);
        }
        Throwable cause = unwrap(error);
        if (job.cancelledByCoordinator) {
            // Its calls that answered before the cancel were paid for: the coordinator counts them.
            return Message.Failed.of(job.id, "job " + job.id + " was stopped on worker " + workerId
                    + ": the coordinator cancelled it", FailureScope.TRANSIENT)
                    .withSpent(cause instanceof ControlException ce ? ce.spent() : null);
        }
        if (cause instanceof ControlException ce) {
            // What the job's answered calls cost goes with it: paid for, and not stored.
            return Message.Failed.of(job.id, messageOf(ce), ce.scope()).withSpent(ce.spent());
        }
        log.error("worker={} job={} - the job runner failed unexpectedly", workerId, job.id, cause);
        return Message.Failed.of(job.id, "worker " + workerId + " failed on job " + job.id + ": "
                + messageOf(cause), FailureScope.TRANSIENT);
    }

    /**
     * The answer sent instead of {@code answer}, whose frame is too large to send: the job's own
     * failure, carrying what the answer's model calls spent (paid for, and not stored).
     */
    Message tooLarge(HeldJob job, Message answer, long frameBytes, long sendLimit) {
        return Message.Failed.of(job.id, "the answer of worker " + workerId + " to job " + job.id
                + " cannot be sent: its frame of " + frameBytes + " bytes exceeds the frame limit of "
                + sendLimit + " bytes; raise --max-frame-bytes on both sides (the coordinator and its"
                + " workers), or lower --max-tokens or --job-size", FailureScope.JOB).withSpent(spentBy(answer));
    }

    /** What the model calls behind an answer reported: a result's records' usage, a failure's spent. */
    private static Usage spentBy(Message answer) {
        if (answer instanceof Message.Failed failed) {
            return failed.spent();
        }
        Usage all = Usage.ZERO;
        if (answer instanceof Message.Result result) {
            for (ResponseRecord r : result.outcome().records()) {
                if (r.usage() != null) {
                    all = all.plus(r.usage());
                }
            }
        }
        return all;
    }

    /** Logs an answer as it is sent: a failure as a warning with its scope, a result at debug. */
    void logAnswer(HeldJob job, Message message) {
        if (message instanceof Message.Failed failed) {
            log.warn("worker={} job={} - failed after {}ms ({}): {}", workerId, job.id, job.elapsedMs(),
                    describeScope(failed.effectiveScope()), failed.error());
        } else if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - done in {}ms", workerId, job.id, job.elapsedMs());
        }
    }

    private static String describeScope(FailureScope scope) {
        switch (scope) {
            case JOB:
                return "the job's own failure, not retryable";
            case WORKER:
                return "this worker's own failure: check its settings (its model API, its sandboxes), as the message says";
            default:
                return "retryable";
        }
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String messageOf(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }
}
