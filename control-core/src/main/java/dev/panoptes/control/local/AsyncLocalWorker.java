package dev.panoptes.control.local;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * An in-process worker over an {@link AsyncJobRunner}: the runner a worker process would run
 * behind its connection (an HTTP model client's, say), handed jobs directly instead, with no
 * thread per job. Unlike {@link LocalWorker} it says which models it serves and which model API it
 * calls, so that the scheduler gives it a run's jobs that name their model, exactly as it gives
 * them to a remote worker that registered with those models.
 *
 * <p>Failures are those of a remote worker: a {@link ControlException} completes the job's future
 * as it says; any other failure, and an outcome that does not answer the job, fails it retryably
 * ({@link WorkerException}). Cancelling the future cancels the runner's stage, which stops the
 * job's model calls.
 *
 * <p>Thread-safe: {@link #dispatch} may be called from any thread and never blocks (the runner's
 * {@code start} must return at once, as {@link AsyncJobRunner} requires); the future completes on
 * the runner's thread. After {@link #close()} dispatches are refused retryably; jobs already
 * started finish as the runner finishes them.
 */
public final class AsyncLocalWorker implements WorkerHandle, AutoCloseable {
    private final String id;
    private final int capacity;
    private final Set<String> models;
    private final String endpoint;
    private final AsyncJobRunner runner;
    private volatile boolean closed;

    /**
     * @param models   the models the runner's API serves; the worker gets only jobs that name one
     *                 of them, or none
     * @param endpoint the model API the runner calls (no credentials), for limits per API; or null
     * @throws IllegalArgumentException when capacity is below 1
     */
    public AsyncLocalWorker(String id, int capacity, Set<String> models, String endpoint, AsyncJobRunner runner) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity of worker " + id + " must be at least 1, got " + capacity);
        }
        this.id = Objects.requireNonNull(id, "id");
        this.capacity = capacity;
        this.models = Set.copyOf(models);
        this.endpoint = endpoint;
        this.runner = Objects.requireNonNull(runner, "runner");
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Set<String> models() {
        return models;
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public CompletableFuture<JobOutcome> dispatch(Job job) {
        Objects.requireNonNull(job, "job");
        if (closed) {
            return CompletableFuture.failedFuture(new DispatchRefusedException("worker " + id + " is closed; job "
                    + job.id() + " was not started"));
        }
        CompletionStage<JobOutcome> stage;
        try {
            stage = runner.start(job);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new WorkerException("worker " + id + " could not start job "
                    + job.id() + ": " + e, e));
        }
        CompletableFuture<JobOutcome> started = stage.toCompletableFuture();
        CompletableFuture<JobOutcome> answered = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean cancelled = super.cancel(mayInterruptIfRunning);
                started.cancel(mayInterruptIfRunning);
                return cancelled;
            }
        };
        // Chained without an executor: the answer completes on the runner's own thread.
        started.whenComplete((outcome, failure) -> {
            if (failure == null) {
                try {
                    answered.complete(Objects.requireNonNull(outcome, "no outcome").requireAnswers(job));
                } catch (RuntimeException e) {
                    answered.completeExceptionally(new WorkerException("worker " + id
                            + " produced a wrong outcome for job " + job.id() + ": " + e.getMessage(), e));
                }
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            answered.completeExceptionally(cause instanceof ControlException ? cause
                    : new WorkerException("worker " + id + " failed on job " + job.id() + ": " + cause, cause));
        });
        return answered;
    }

    /** Refuses further jobs (retryably); the runner and its jobs belong to whoever made them. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "AsyncLocalWorker[" + id + ", capacity=" + capacity + ", models=" + models + "]";
    }
}
