package dev.panoptes.control.wire;

import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Redaction;
import dev.panoptes.control.Usage;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One frame of PROTOCOL.md: a record per message type, in both directions. {@link MessageCodec}
 * maps them to and from JSON exactly as the protocol writes them.
 */
public sealed interface Message {
    /** The protocol version this code speaks. */
    int PROTOCOL_VERSION = 1;

    /** The value of the frame's {@code "type"} field. */
    String type();

    /**
     * worker -> coordinator, first frame. Deliberately lenient: the coordinator validates
     * workerId and protocol itself so that it can answer {@link Rejected} with the reason.
     *
     * @param workerId the worker's chosen id
     * @param capacity jobs the worker runs at once, as sent (clamped by the coordinator)
     * @param protocol the protocol version the worker speaks
     * @param token    the shared secret, or null
     * @param labels   informational labels; never null. Every URL in a value is kept without its
     *                 user info, query and fragment ({@link dev.panoptes.control.Redaction#labels}):
     *                 labels are logged and shown by the coordinator, so a key in a URL would be too.
     *                 Both sides make the record, so neither sends nor holds one
     * @param models   the models the worker's API serves (revision 3); empty when it did not say,
     *                 and then it serves only runs that name no model
     */
    record Register(String workerId, int capacity, int protocol, String token, Map<String, String> labels,
                    List<String> models) implements Message {
        public Register {
            Objects.requireNonNull(workerId, "workerId");
            labels = labels == null ? Map.of() : Map.copyOf(Redaction.labels(labels));
            models = models == null ? List.of() : List.copyOf(models);
        }

        /** A register frame that names no models. */
        public Register(String workerId, int capacity, int protocol, String token, Map<String, String> labels) {
            this(workerId, capacity, protocol, token, labels, List.of());
        }

        /** A register frame without token, labels or models. */
        public Register(String workerId, int capacity) {
            this(workerId, capacity, PROTOCOL_VERSION, null, Map.of());
        }

        @Override
        public String type() {
            return "register";
        }

        /** Never prints the token. */
        @Override
        public String toString() {
            return "Register[workerId=" + workerId + ", capacity=" + capacity + ", protocol=" + protocol
                    + ", token=" + (token == null ? "none" : "***") + ", labels=" + labels + ", models=" + models + "]";
        }
    }

    /**
     * Liveness, in both directions. The worker sends its id; the coordinator sends none.
     *
     * @param workerId the sending worker's id, or null from the coordinator
     */
    record Heartbeat(String workerId) implements Message {
        /** The coordinator's heartbeat. */
        public static final Heartbeat COORDINATOR = new Heartbeat(null);

        @Override
        public String type() {
            return "heartbeat";
        }
    }

    /**
     * worker -> coordinator: the answer to one assigned job.
     *
     * @param outcome one record per vignette
     */
    record Result(JobOutcome outcome) implements Message {
        public Result {
            Objects.requireNonNull(outcome, "outcome");
        }

        @Override
        public String type() {
            return "result";
        }
    }

    /**
     * worker -> coordinator: the job could not be completed.
     *
     * @param jobId     the job
     * @param error     what went wrong, for humans
     * @param retryable whether the coordinator should send the job again, elsewhere; kept for
     *                  peers that do not read {@code scope}
     * @param scope     who the failure belongs to, or null when the peer did not say (an older
     *                  worker, or a scope this version does not know): see {@link #effectiveScope()}
     * @param spent     the tokens the job's model calls that answered reported before it failed
     *                  (answers paid for and not stored), or null when the peer did not say (none,
     *                  or a worker of revision 7 or older)
     */
    record Failed(JobId jobId, String error, boolean retryable, FailureScope scope, Usage spent) implements Message {
        public Failed {
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(error, "error");
        }

        /** A failed frame that says nothing of tokens spent. */
        public Failed(JobId jobId, String error, boolean retryable, FailureScope scope) {
            this(jobId, error, retryable, scope, null);
        }

        /** This frame saying the job spent {@code usage} before it failed (null or zero: nothing said). */
        public Failed withSpent(Usage usage) {
            return new Failed(jobId, error, retryable, scope,
                    usage == null || usage.totalTokens() == 0 ? null : usage);
        }

        /** A failed frame without a scope, as an older worker sends it. */
        public Failed(JobId jobId, String error, boolean retryable) {
            this(jobId, error, retryable, null);
        }

        /** A failed frame with both fields consistent: retryable unless the scope is the job's. */
        public static Failed of(JobId jobId, String error, FailureScope scope) {
            return new Failed(jobId, error, scope != FailureScope.JOB, Objects.requireNonNull(scope, "scope"));
        }

        /** The scope the sender gave, else the one its {@code retryable} flag implies. */
        public FailureScope effectiveScope() {
            return scope != null ? scope : FailureScope.fromRetryable(retryable);
        }

        @Override
        public String type() {
            return "failed";
        }
    }

    /**
     * worker -> coordinator (revision 4): the worker's model API answered {@code count} requests
     * with HTTP 429 (too many requests) since the worker last said so, retried ones included. The
     * coordinator uses it to govern the fleet's concurrency per model endpoint.
     *
     * @param count 429 answers since the last {@code throttled} frame; at least 1
     */
    record Throttled(long count) implements Message {
        @Override
        public String type() {
            return "throttled";
        }
    }

    /** worker -> coordinator: assign nothing more; the worker finishes what it holds and closes. */
    record Drain() implements Message {
        @Override
        public String type() {
            return "drain";
        }
    }

    /**
     * coordinator -> worker: the registration was accepted.
     *
     * @param heartbeatMs   the coordinator's heartbeat interval
     * @param maxFrameBytes the coordinator's frame limit (revision 6), the largest frame it
     *                      accepts from this worker; null when it did not say (then 16 MiB)
     */
    record Registered(long heartbeatMs, Long maxFrameBytes) implements Message {
        /** An acceptance that does not say the coordinator's frame limit. */
        public Registered(long heartbeatMs) {
            this(heartbeatMs, null);
        }

        @Override
        public String type() {
            return "registered";
        }
    }

    /**
     * coordinator -> worker: the registration was refused; the connection closes next.
     *
     * @param reason    why, in words the worker's operator can act on
     * @param retryable true when the same registration may be accepted later (the coordinator
     *                  was busy or slow), false when only the operator can fix it (wrong token,
     *                  unsupported protocol, invalid worker id): the worker then stops
     */
    record Rejected(String reason, boolean retryable) implements Message {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }

        /** A rejection that only the operator can fix. */
        public Rejected(String reason) {
            this(reason, false);
        }

        @Override
        public String type() {
            return "rejected";
        }
    }

    /**
     * coordinator -> worker: run this job.
     *
     * @param job the job
     */
    record Assign(Job job) implements Message {
        public Assign {
            Objects.requireNonNull(job, "job");
        }

        @Override
        public String type() {
            return "assign";
        }
    }

    /**
     * coordinator -> worker: the coordinator no longer wants the answer to this job (its
     * deadline passed). The worker should stop it and must still answer it, with {@code failed}
     * or {@code result}: the job's slot stays taken until it does.
     *
     * @param jobId  the job
     * @param reason why, for the worker's log; may be null
     */
    record Cancel(JobId jobId, String reason) implements Message {
        public Cancel {
            Objects.requireNonNull(jobId, "jobId");
        }

        @Override
        public String type() {
            return "cancel";
        }
    }
}
