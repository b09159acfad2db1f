package dev.panoptes.control;

import java.util.Set;
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

    /**
     * The models this worker's model API serves, as the worker said when it joined; empty when
     * it did not say.
     */
    default Set<String> models() {
        return Set.of();
    }

    /**
     * Whether this worker may run a job that asks for {@code model}: any job that names no
     * model (null), and a job naming one of {@link #models()}. A worker that said nothing about
     * its models gets only jobs that name none, so that a run that names its model never mixes
     * in answers from whatever model such a worker happens to serve.
     */
    default boolean serves(String model) {
        return model == null || models().contains(model);
    }

    /**
     * The model API this worker calls (its base URL, without credentials), for limits shared by
     * the workers of one API; null when unknown.
     */
    default String endpoint() {
        return null;
    }

    /** The number of jobs this worker runs at once; at least 1. */
    int capacity();

    /**
     * Hands a job to this worker.
     *
     * <p>May block while the worker's queue is full (backpressure); never blocks on the job
     * itself. The future completes with the job's outcome or fails with a
     * {@link ControlException}: {@link WorkerException} (retryable) when the worker or its
     * connection failed (a {@link DispatchRefusedException} when the job never reached it, a
     * {@link WorkerFaultException} when the worker is at fault), {@link JobFailedException} when
     * the job cannot succeed. The future is always completed eventually, including when the
     * worker goes away.
     *
     * <p>Cancelling the future ({@code cancel(true)}) asks the worker to stop the job, as best it
     * can; the job's slot may stay in use until the worker lets go of it, which
     * {@link #unavailableSlots()} reports.
     *
     * @throws NullPointerException when job is null
     */
    CompletableFuture<JobOutcome> dispatch(Job job);

    /**
     * Slots taken by jobs whose futures are done but which the worker has not let go of yet
     * (cancelled, and still running there). A scheduler subtracts them from {@link #capacity()}
     * so that it does not queue work behind a job that may never end. A moment's view; 0 by
     * default.
     */
    default int unavailableSlots() {
        return 0;
    }
}
