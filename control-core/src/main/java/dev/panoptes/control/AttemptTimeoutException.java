package dev.panoptes.control;

/**
 * An attempt passed its deadline ({@link dev.panoptes.control.schedule.SchedulerOptions#jobTimeout()})
 * before the worker answered. The scheduler cancelled the attempt's future, which asks the worker
 * to stop the job, and sends the job again. Retryable; {@link FailureScope#TRANSIENT} for the
 * job, though repeated ones on one worker quarantine it.
 */
public class AttemptTimeoutException extends WorkerException {
    private static final long serialVersionUID = 1L;

    public AttemptTimeoutException(String message) {
        super(message);
    }
}
