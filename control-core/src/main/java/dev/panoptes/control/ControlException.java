package dev.panoptes.control;

/**
 * The root of Panoptes' own failures. Every failed {@code dispatch} future carries one, and
 * {@link #isRetryable()} tells the scheduler whether sending the job again can help.
 *
 * <p>Unchecked so that it travels through {@link java.util.concurrent.CompletableFuture}
 * without wrapping. Messages say what happened and to what (worker, job, address).
 */
public abstract class ControlException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    protected ControlException(String message) {
        super(message);
    }

    protected ControlException(String message, Throwable cause) {
        super(message, cause);
    }

    /** True when the job itself may well succeed if sent again, possibly to another worker. */
    public abstract boolean isRetryable();

    /**
     * Who the failure belongs to. By default {@link FailureScope#TRANSIENT} when retryable and
     * {@link FailureScope#JOB} when not; {@link WorkerFaultException} says {@link FailureScope#WORKER}.
     */
    public FailureScope scope() {
        return FailureScope.fromRetryable(isRetryable());
    }
}
