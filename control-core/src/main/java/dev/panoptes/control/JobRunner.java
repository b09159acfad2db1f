package dev.panoptes.control;

/**
 * What a worker does with a job. Called on a worker's job thread, possibly for several jobs at
 * once, so implementations are thread-safe.
 */
@FunctionalInterface
public interface JobRunner {
    /**
     * Runs a job to completion.
     *
     * @return one record per vignette of the job's spec
     * @throws ControlException     to say whether the failure is retryable: a
     *                              {@link WorkerException} may succeed elsewhere, a
     *                              {@link JobFailedException} never will. Any other runtime
     *                              exception is treated as retryable.
     * @throws InterruptedException when the worker is shutting down
     */
    JobOutcome run(Job job) throws InterruptedException;
}
