package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One job's progress through a run: where it failed, and what its failures have cost it. Owned
 * by the thread running the scheduler's {@code run}.
 */
final class JobState {
    final Job job;
    /** Workers it failed on, by identity: a reconnected worker is a new handle and may be tried. */
    final Set<WorkerHandle> failedOn = Collections.newSetFromMap(new IdentityHashMap<>());
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
