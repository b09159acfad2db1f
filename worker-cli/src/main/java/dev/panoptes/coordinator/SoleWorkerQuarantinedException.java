package dev.panoptes.coordinator;

/**
 * The run's only worker (in this process) refuses its jobs for good, or was quarantined and failed
 * its probation, so no job can be done: the run stops with what was stored
 * ({@link CoordinatorRun#EXIT_MODEL_API_UNUSABLE}).
 */
final class SoleWorkerQuarantinedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param workerId  the worker's id
     * @param reason    its last failure, in its own words
     * @param afterRetry true when it failed again after the scheduler's probation, false when it
     *                  said it refuses for good (at its first refusal: no quarantine was waited out)
     */
    SoleWorkerQuarantinedException(String workerId, String reason, boolean afterRetry) {
        super("the run's only worker (" + workerId + ")"
                + (afterRetry ? " was quarantined again after its probation" : " refuses these jobs for good")
                + ", and no other worker can take its jobs under 'eval': " + reason);
    }
}
