package dev.panoptes.control;

import java.util.concurrent.CompletableFuture;

/**
 * A worker as the scheduler sees it: something that runs up to {@link #capacity()} jobs at once
 * and answers each with a future. Local and remote workers are indistinguishable through it.
 *
 * <p>Implementations are thread-safe: any thread may call any method.
 */
public interface WorkerHandle {
    /** A human-readable id, for logs and reports; not necessarily unique across connections. */
    String id();

    /** The number of jobs this worker runs at once; at least 1. */
    int capacity();

    /**
     * Hands a job to this worker.
     *
     * <p>May block while the worker's queue is full (backpressure); never blocks on the job
     * itself. The future completes with the job's outcome or fails with a
     * {@link ControlException}: {@link WorkerException} (retryable) when the worker or its
     * connection failed, {@link JobFailedException} when the job cannot succeed. The future
     * is always completed eventually, including when the worker goes away.
     *
     * @throws NullPointerException when job is null
     */
    CompletableFuture<JobOutcome> dispatch(Job job);
}
