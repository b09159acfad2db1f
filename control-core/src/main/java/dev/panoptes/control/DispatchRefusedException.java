package dev.panoptes.control;

/**
 * A dispatch that never reached the worker: the handle refused it on the caller's side (the
 * worker is closing or draining, its queue was full on a thread that must not block). The job
 * was not run anywhere, so the scheduler sends it again elsewhere at once and does not count an
 * attempt.
 */
public class DispatchRefusedException extends WorkerException {
    private static final long serialVersionUID = 1L;

    public DispatchRefusedException(String message) {
        super(message);
    }

    public DispatchRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
