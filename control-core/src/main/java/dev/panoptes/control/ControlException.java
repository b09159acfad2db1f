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

    /**
     * Tokens the model calls of the failed attempt reported before it failed (calls that answered,
     * whose answers are not stored because the job failed). Not serialized: a remote worker's
     * failure carries it on the wire instead.
     */
    private transient volatile Usage spent = Usage.ZERO;

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

    /**
     * The tokens the failed attempt's model calls reported before it failed: money spent on
     * answers that will not be stored. {@link Usage#ZERO} when none (or unknown: a call the
     * attempt cancelled reported nothing). Any thread.
     */
    public Usage spent() {
        Usage u = spent;
        return u == null ? Usage.ZERO : u;
    }

    /**
     * Adds {@code usage} to what the failed attempt spent ({@link #spent()}), for whoever fails
     * the attempt with this exception to say. Any thread.
     *
     * @return this exception
     */
    public ControlException addSpent(Usage usage) {
        if (usage != null && usage.totalTokens() > 0) {
            synchronized (this) {
                spent = spent().plus(usage);
            }
        }
        return this;
    }
}
