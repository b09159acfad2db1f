package dev.panoptes.control.local;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * a {@link ControlException} from the runner fails the job as it says; any other exception, an
 * {@link Error}, and an outcome that does not answer the job fail it retryably. Cancelling a
 * job's future interrupts the thread running it.
 *
 * <p>Thread-safe. {@link #close()} fails every job not yet finished, retryably.
 */
public final class LocalWorker implements WorkerHandle, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LocalWorker.class);
    private final String id;
    private final int capacity;
    private final JobRunner runner;
    private final ExecutorService executor;
    private final AtomicInteger stillRunningAfterCancel = new AtomicInteger();
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
        LocalJob reply = new LocalJob(job);
        try {
            executor.execute(reply);
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new DispatchRefusedException("local worker " + id + " is closed; job "
                    + job.id() + " was not run", e));
        }
        return reply;
    }

    /** Jobs whose futures were cancelled while they ran, and that have not returned yet. */
    @Override
    public int unavailableSlots() {
        return stillRunningAfterCancel.get();
    }

    /**
     * One dispatched job: its future, and the task that runs it. Cancelling the future
     * interrupts the thread running the job, and the job keeps its slot until it returns.
     */
    private final class LocalJob extends CompletableFuture<JobOutcome> implements Runnable {
        private final Job job;
        /** Guarded by this: the thread running the job, or null before and after. */
        private Thread thread;
        /** Guarded by this: true while counted in {@link #stillRunningAfterCancel}. */
        private boolean counted;

        LocalJob(Job job) {
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
                runJob(job, this);
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
    }

    private void runJob(Job job, CompletableFuture<JobOutcome> reply) {
        if (closed) {
            reply.completeExceptionally(new DispatchRefusedException("local worker " + id + " was closed before job "
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
        } catch (Error e) {
            // Never leave the future hanging: the scheduler would wait for it forever. The error
            // is the runner's (or the JVM's); it is reported with the job, not rethrown here.
            log.error("worker={} job={} - the job runner threw {}; failing the job retryably", id, job.id(), e, e);
            reply.completeExceptionally(new WorkerException("local worker " + id + " failed on job " + job.id()
                    + " with " + e, e));
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
