package dev.panoptes.control;

/**
 * A worker, or the connection to it, failed: the job itself may be fine, so it is
 * <em>retryable</em>. Examples: the worker's connection was lost, the model API kept
 * answering 503 until the client gave up. Its {@link #scope()} is
 * {@link FailureScope#TRANSIENT}: the moment's fault. {@link WorkerFaultException} is the one
 * that blames the worker itself.
 */
public class WorkerException extends ControlException {
    private static final long serialVersionUID = 1L;

    public WorkerException(String message) {
        super(message);
    }

    public WorkerException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Always true. */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
