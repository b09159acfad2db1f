package dev.panoptes.control;

/**
 * A peer broke PROTOCOL.md: a bad length prefix, bytes that are not a JSON object, a field of
 * the wrong type. The connection that carried it is closed; the jobs that were in flight on it
 * fail with a retryable {@link WorkerException} whose cause is this exception.
 */
public class ProtocolException extends ControlException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }

    public ProtocolException(String message, Throwable cause) {
        super(message, cause);
    }

    /** False: the same bytes would be just as wrong a second time. */
    @Override
    public boolean isRetryable() {
        return false;
    }
}
