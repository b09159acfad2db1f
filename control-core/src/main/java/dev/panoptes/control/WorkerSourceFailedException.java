package dev.panoptes.control;

/**
 * A scheduler's run stopped because its {@link WorkerSource} failed for good (for example the
 * coordinator's worker server died). What was stored stays stored and no job is recorded as
 * failed: running the same jobs again against the same store resumes. The source's failure is
 * the cause.
 */
public class WorkerSourceFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WorkerSourceFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
