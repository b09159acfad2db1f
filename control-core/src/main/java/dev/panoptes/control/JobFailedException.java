package dev.panoptes.control;

/**
 * The job cannot succeed wherever it runs (for example the model API rejected its request
 * with 400): it is <em>not</em> retryable, and the scheduler records it as failed at once. Its
 * {@link #scope()} is {@link FailureScope#JOB}.
 */
public class JobFailedException extends ControlException {
    private static final long serialVersionUID = 1L;

    public JobFailedException(String message) {
        super(message);
    }

    public JobFailedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Always false. */
    @Override
    public boolean isRetryable() {
        return false;
    }
}
