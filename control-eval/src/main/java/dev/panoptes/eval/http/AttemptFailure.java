package dev.panoptes.eval.http;

import dev.panoptes.control.FailureScope;

import java.time.Duration;

/**
 * Why one attempt of a {@link Call} failed, and whether another attempt may help. Carries no
 * stack trace: it never leaves this package, where a call turns it into the exception its
 * future fails with. Immutable.
 */
final class AttemptFailure extends Exception {
    private static final long serialVersionUID = 1L;
    /**
     * Whose fault it is: decides WorkerFaultException, JobFailedException or (once retries
     * are spent) WorkerException.
     */
    final FailureScope scope;
    /** Whether to try again within this call (only ever true for TRANSIENT). */
    final boolean retryHere;
    final String description;
    /** The server's requested delay, or null. */
    final transient Duration retryAfter;

    AttemptFailure(FailureScope scope, String description, Throwable cause, Duration retryAfter) {
        this(scope, scope == FailureScope.TRANSIENT, description, cause, retryAfter);
    }

    AttemptFailure(FailureScope scope, boolean retryHere, String description, Throwable cause,
                   Duration retryAfter) {
        super(description, cause, false, false);
        this.scope = scope;
        this.retryHere = retryHere;
        this.description = description;
        this.retryAfter = retryAfter;
    }
}
