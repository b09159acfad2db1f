package dev.panoptes.control.local;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.PooledJobRunner;
import dev.panoptes.control.WorkerHandle;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * An in-process worker: runs up to {@code capacity} jobs at once on its own threads with a
 * {@link JobRunner} (through a {@link PooledJobRunner}). The local twin of a remote worker, with
 * the same failure semantics: a {@link ControlException} from the runner fails the job as it
 * says; any other exception, an {@link Error}, and an outcome that does not answer the job fail it
 * retryably. Cancelling a job's future interrupts the thread running it.
 *
 * <p>Thread-safe. {@link #close()} fails every job not yet finished, retryably.
 */
public final class LocalWorker implements WorkerHandle, AutoCloseable {
    private final String id;
    private final int capacity;
    private final PooledJobRunner pool;

    /**
     * @throws IllegalArgumentException when capacity is below 1
     */
    public LocalWorker(String id, int capacity, JobRunner runner) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity of worker " + id + " must be at least 1, got " + capacity);
        }
        this.id = Objects.requireNonNull(id, "id");
        this.capacity = capacity;
        this.pool = new PooledJobRunner(Objects.requireNonNull(runner, "runner"), capacity, "local worker " + id);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public CompletableFuture<JobOutcome> dispatch(Job job) {
        return pool.start(Objects.requireNonNull(job, "job")).toCompletableFuture();
    }

    /** Jobs whose futures were cancelled while they ran, and that have not returned yet. */
    @Override
    public int unavailableSlots() {
        return pool.stillRunning();
    }

    /** Stops the worker; jobs queued or running fail with a retryable exception. */
    @Override
    public void close() {
        pool.close();
    }

    @Override
    public String toString() {
        return "LocalWorker[" + id + ", capacity=" + capacity + "]";
    }
}
