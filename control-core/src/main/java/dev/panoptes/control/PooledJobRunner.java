package dev.panoptes.control;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a naturally blocking {@link JobRunner} as an {@link AsyncJobRunner}, on a bounded pool of
 * its own daemon threads: at most {@code threads} jobs run at once, the rest wait their turn.
 *
 * <p>A job's failures are translated as a worker reports them: a {@link ControlException} as it
 * says, an {@link InterruptedException} (a cancel) and any other exception or {@link Error} as
 * transient ({@link WorkerException}); an outcome that does not answer the job fails it
 * retryably. Cancelling a job's future interrupts the thread running it, and {@link #stillRunning()}
 * counts it until the runner returns.
 *
 * <p>Thread-safe. {@link #close()} stops the pool: jobs waiting fail as never run
 * ({@link DispatchRefusedException}); running ones are interrupted.
 */
public final class PooledJobRunner implements AsyncJobRunner, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PooledJobRunner.class);

    private final JobRunner runner;
    private final String name;
    private final ExecutorService pool;
    private final AtomicInteger stillRunningAfterCancel = new AtomicInteger();
    private volatile boolean closed;

    /**
     * @param runner  what each job runs
     * @param threads how many jobs run at once, at least 1
     * @param name    names the messages ("local worker w1") and, with dashes for spaces, the
     *                threads ({@code local-worker-w1-1}, ...)
     * @throws IllegalArgumentException when threads is below 1
     */
    public PooledJobRunner(JobRunner runner, int threads, String name) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads of " + name + " must be at least 1, got " + threads);
        }
        this.runner = Objects.requireNonNull(runner, "runner");
        this.name = Objects.requireNonNull(name, "name");
        this.pool = Executors.newFixedThreadPool(threads, DaemonThreads.numbered(name.replace(' ', '-')));
    }

    /** Queues the job for the pool and returns its future at once. Any thread; never blocks. */
    @Override
    public CompletionStage<JobOutcome> start(Job job) {
        Objects.requireNonNull(job, "job");
        PooledJob reply = new PooledJob(job);
        try {
            pool.execute(reply);
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new DispatchRefusedException(name + " is closed; job " + job.id()
                    + " was not run", e));
        }
        return reply;
    }

    /** Jobs whose futures were cancelled while they ran, and that have not returned yet. Any thread. */
    public int stillRunning() {
        return stillRunningAfterCancel.get();
    }

    /**
     * Stops the pool: jobs not started fail with a {@link DispatchRefusedException}, running
     * ones are interrupted (and fail retryably). Idempotent; any thread.
     */
    @Override
    public void close() {
        closed = true;
        List<Runnable> neverStarted = pool.shutdownNow();
        for (Runnable r : neverStarted) {
            // A queued job fails its own future when run after close, so nothing is left waiting.
            r.run();
        }
    }

    @Override
    public String toString() {
        return "PooledJobRunner[" + name + ", " + runner + (closed ? ", closed" : "") + "]";
    }

    /**
     * One job: its future, and the task that runs it. Cancelling the future interrupts the thread
     * running the job, and the job keeps its place in {@link #stillRunning()} until it returns.
     */
    private final class PooledJob extends CompletableFuture<JobOutcome> implements Runnable {
        private final Job job;
        /** Guarded by this: the thread running the job, or null before and after. */
        private Thread thread;
        /** Guarded by this: true while counted in {@link #stillRunningAfterCancel}. */
        private boolean counted;

        PooledJob(Job job) {
            this.job = job;
        }

        @Override
        public void run() {
            synchronized (this) {
                if (isDone()) {
                    return; // cancelled while queued
                }
                thread = Thread.currentThread();
            }
            try {
                runJob();
            } finally {
                synchronized (this) {
                    thread = null;
                    if (counted) {
                        counted = false;
                        stillRunningAfterCancel.decrementAndGet();
                    }
                }
                // A cancel's interrupt is for this job only, not for the next one on this thread.
                Thread.interrupted();
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                synchronized (this) {
                    if (thread != null && !counted) {
                        counted = true;
                        stillRunningAfterCancel.incrementAndGet();
                        if (mayInterruptIfRunning) {
                            thread.interrupt();
                        }
                    }
                }
            }
            return cancelled;
        }

        private void runJob() {
            if (closed) {
                completeExceptionally(new DispatchRefusedException(name + " was closed before job " + job.id()
                        + " started"));
                return;
            }
            try {
                JobOutcome outcome = runner.run(job);
                if (outcome == null) {
                    completeExceptionally(new WorkerException(name + " returned no outcome for job " + job.id()));
                    return;
                }
                complete(outcome.requireAnswers(job));
            } catch (ControlException e) {
                completeExceptionally(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                completeExceptionally(new WorkerException(name + " was interrupted while running job " + job.id(), e));
            } catch (IllegalArgumentException e) {
                completeExceptionally(new WorkerException(name + " produced a wrong outcome for job " + job.id() + ": "
                        + e.getMessage(), e));
            } catch (RuntimeException e) {
                completeExceptionally(new WorkerException(name + " failed on job " + job.id() + ": " + e, e));
            } catch (Error e) {
                // Never leave the future hanging: whoever waits for it would wait forever. The error
                // is the runner's (or the JVM's); it is reported with the job, not rethrown here.
                log.error("job={} - {} threw {}; failing the job retryably", job.id(), name, e, e);
                completeExceptionally(new WorkerException(name + " failed on job " + job.id() + " with " + e, e));
            }
        }
    }
}
