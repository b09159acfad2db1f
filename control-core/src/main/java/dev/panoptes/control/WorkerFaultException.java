package dev.panoptes.control;

/**
 * The worker itself is at fault, not the job and not the moment: its model API refuses
 * connections, does not resolve, fails TLS, or answers 401, 403 or 404 (a wrong base URL, key or
 * model name). Retryable, on another worker: the scheduler does not count it against the job's
 * attempts (up to {@link dev.panoptes.control.schedule.SchedulerOptions#maxWorkerFaults()}) and
 * quarantines a worker that keeps failing this way.
 */
public class WorkerFaultException extends WorkerException {
    private static final long serialVersionUID = 1L;

    public WorkerFaultException(String message) {
        super(message);
    }

    public WorkerFaultException(String message, Throwable cause) {
        super(message, cause);
    }

    /** {@link FailureScope#WORKER}. */
    @Override
    public FailureScope scope() {
        return FailureScope.WORKER;
    }
}
