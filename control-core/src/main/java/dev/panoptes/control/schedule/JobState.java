package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One job's progress through a run: where it failed, and what its failures have cost it. Owned
 * by the thread running the scheduler's {@code run}.
 */
final class JobState {
    final Job job;
    /**
     * Workers it failed on, by {@link WorkerKey}: a worker that reconnects is still one it failed
     * on, so the job still prefers the others.
     */
    final Workers failedOn = new Workers();
    /** Dispatches made, counted or not. */
    int dispatches;
    /** Attempts that count against {@link SchedulerOptions#maxAttempts()}. */
    int attempts;
    /** Worker-scoped failures so far. */
    int workerFaults;
    /** Dispatches in a row that never reached their worker. */
    int refusalsInARow;
    /** When a delayed job is due again, in {@link System#nanoTime()} units. */
    long dueNanos;

    JobState(Job job) {
        this.job = job;
    }

    /**
     * A set of workers by {@link WorkerKey}, empty for most jobs. Owned by the thread running the
     * scheduler's {@code run}.
     */
    static final class Workers {
        private Set<WorkerKey> keys;

        /** Adds the worker, or a worker with its key; adding it again changes nothing. */
        void add(WorkerHandle worker) {
            if (keys == null) {
                keys = new HashSet<>(4);
            }
            keys.add(WorkerKey.of(worker));
        }

        /** True when the worker, or an earlier connection of it (same id and endpoint), was added. */
        boolean contains(WorkerHandle worker) {
            // Most jobs never fail: no key is made for them on the dispatch path.
            return keys != null && keys.contains(WorkerKey.of(worker));
        }
    }

    /**
     * One dispatch of the job to a worker, and its deadline. Owned by the thread running the
     * scheduler's {@code run}, like the job's state.
     */
    static final class Attempt {
        final JobState state;
        final WorkerHandle worker;
        final long deadlineNanos;
        CompletableFuture<JobOutcome> reply;
        boolean answered;
        boolean timedOut;

        Attempt(JobState state, WorkerHandle worker, long deadlineNanos) {
            this.state = state;
            this.worker = worker;
            this.deadlineNanos = deadlineNanos;
        }
    }
}
