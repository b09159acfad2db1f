package dev.panoptes.control.local;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process worker: runs up to {@code capacity} jobs at once on its own threads with a
 * {@link JobRunner}. The local twin of a remote worker, with the same failure semantics:
 * a {@link ControlException} from the runner fails the job as it says, any other exception and
 * an outcome that does not answer the job fail it retryably.
 *
 * <p>Thread-safe. {@link #close()} fails every job not yet finished, retryably.
 */
public final class LocalWorker implements WorkerHandle, AutoCloseable {
    private final String id;
    private final int capacity;
    private final JobRunner runner;
    private final ExecutorService executor;
    private volatile boolean closed;

    /**
     * @throws IllegalArgumentException when capacity is below 1
     */
    public LocalWorker(String id, int capacity, JobRunner runner) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity of worker " + id + " must be at least 1, got " + capacity);
        }
        this.id = Objects.requireNonNull(id, "id");
        this.capacity = capacity;
        this.runner = Objects.requireNonNull(runner, "runner");
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(capacity, r -> {
            Thread t = new Thread(r, "local-worker-" + id + "-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
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
        Objects.requireNonNull(job, "job");
        CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
        try {
            executor.execute(() -> run(job, reply));
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new WorkerException("local worker " + id + " is closed; job " + job.id()
                    + " was not run", e));
        }
        return reply;
    }

    private void run(Job job, CompletableFuture<JobOutcome> reply) {
        if (closed) {
            reply.completeExceptionally(new WorkerException("local worker " + id + " was closed before job "
                    + job.id() + " started"));
            return;
        }
        try {
            reply.complete(runner.run(job).requireAnswers(job));
        } catch (ControlException e) {
            reply.completeExceptionally(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reply.completeExceptionally(new WorkerException("local worker " + id + " was closed while running job "
                    + job.id(), e));
        } catch (RuntimeException e) {
            reply.completeExceptionally(new WorkerException("local worker " + id + " failed on job " + job.id()
                    + ": " + e, e));
        }
    }

    /** Stops the worker; jobs queued or running fail with a retryable {@link WorkerException}. */
    @Override
    public void close() {
        closed = true;
        List<Runnable> neverStarted = executor.shutdownNow();
        for (Runnable r : neverStarted) {
            // A queued task fails its own future when run after close, so nothing is left waiting.
            r.run();
        }
    }

    @Override
    public String toString() {
        return "LocalWorker[" + id + ", capacity=" + capacity + "]";
    }
}
