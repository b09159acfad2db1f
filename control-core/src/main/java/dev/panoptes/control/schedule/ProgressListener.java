package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.store.ResultStore;

import java.time.Duration;
import java.util.List;

/**
 * Told what a {@link Scheduler} run does, as it does it. Every method is called on the
 * scheduler's thread and should return quickly: the run waits for it. All methods default to
 * doing nothing.
 *
 * <p>"The scheduler's thread" is whichever thread holds the run's turn: the caller of
 * {@link Scheduler#run}, or a worker source's thread that delivers answers as a host (a selector
 * thread completing directly; see {@link dev.panoptes.control.HandOffBatch#openHost()}). Calls
 * never overlap and each sees what the ones before it did (the turn is a lock), but a listener
 * must not block (that would stall the workers of that selector) nor keep per-thread state.
 */
public interface ProgressListener {
    /** A listener that ignores everything. */
    ProgressListener NONE = new ProgressListener() {
    };

    /**
     * A listener that passes every event to each of {@code listeners}, in order.
     *
     * @param listeners called in list order; the list is copied
     */
    static ProgressListener fanOut(List<ProgressListener> listeners) {
        List<ProgressListener> all = List.copyOf(listeners);
        // The once-per-job events loop over an array: forEach with a capturing lambda made an
        // object per event, twice per answer, on the thread holding the run's turn.
        ProgressListener[] each = all.toArray(new ProgressListener[0]);
        return new ProgressListener() {
            @Override
            public void onStart(int toRun, int skipped) {
                all.forEach(l -> l.onStart(toRun, skipped));
            }

            @Override
            public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                for (ProgressListener l : each) {
                    l.onDispatched(job, worker, attempt);
                }
            }

            @Override
            public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
                for (ProgressListener l : each) {
                    l.onCompleted(job, worker, outcome, receipt);
                }
            }

            @Override
            public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
                all.forEach(l -> l.onRetry(job, worker, cause, attempt, delay));
            }

            @Override
            public void onAttemptSpent(Job job, WorkerHandle worker, Usage usage) {
                all.forEach(l -> l.onAttemptSpent(job, worker, usage));
            }

            @Override
            public void onFailed(Job job, String reason, int attempts) {
                all.forEach(l -> l.onFailed(job, reason, attempts));
            }

            @Override
            public void onWaitingForWorkers(Duration waited) {
                all.forEach(l -> l.onWaitingForWorkers(waited));
            }

            @Override
            public void onNoWorkerServes(Duration waited, java.util.Set<String> models,
                                         java.util.List<WorkerHandle> workers) {
                all.forEach(l -> l.onNoWorkerServes(waited, models, workers));
            }

            @Override
            public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
                all.forEach(l -> l.onQuarantined(worker, reason, failuresInARow, duration));
            }

            @Override
            public void onProbation(WorkerHandle worker) {
                all.forEach(l -> l.onProbation(worker));
            }

            @Override
            public void onAllWorkersQuarantined(Duration waited, int workers) {
                all.forEach(l -> l.onAllWorkersQuarantined(waited, workers));
            }

            @Override
            public void onStoreDown(String error, int held) {
                all.forEach(l -> l.onStoreDown(error, held));
            }

            @Override
            public void onStoreBack(Duration outage, int held) {
                all.forEach(l -> l.onStoreBack(outage, held));
            }
        };
    }

    /** The run starts: {@code toRun} jobs will be dispatched, {@code skipped} were already complete. */
    default void onStart(int toRun, int skipped) {
    }

    /** A job was handed to a worker; {@code attempt} counts from 1. */
    default void onDispatched(Job job, WorkerHandle worker, int attempt) {
    }

    /** A job was answered and its records stored (when the store took them, which may be a moment later). */
    default void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
    }

    /** A job failed retryably on a worker and will be sent again after {@code delay}. */
    default void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
    }

    /**
     * An attempt of the job failed after some of its model calls had answered: {@code usage} is
     * what those calls reported, tokens paid for answers that will not be stored. Called before
     * the failure's {@link #onRetry} or {@link #onFailed}; or, for an answer that reached the
     * coordinator after its attempt had timed out or been cancelled, when that answer came (after
     * the attempt's failure, and only while the run lasts). Calls the attempt cancelled (a
     * deadline passed, the job ended) and that reported nothing are not in it.
     *
     * @param usage more than zero tokens
     */
    default void onAttemptSpent(Job job, WorkerHandle worker, Usage usage) {
    }

    /** A job failed for good. */
    default void onFailed(Job job, String reason, int attempts) {
    }

    /**
     * There is work, and workers, but none of them serves a model the waiting jobs ask for;
     * called about every few seconds while that lasts.
     *
     * @param models  the models the waiting jobs ask for
     * @param workers the workers connected, none of which serves them
     */
    default void onNoWorkerServes(Duration waited, java.util.Set<String> models, java.util.List<WorkerHandle> workers) {
    }

    /** There is work but no worker; called about every few seconds while that lasts. */
    default void onWaitingForWorkers(Duration waited) {
    }

    /**
     * A worker's own failures (worker-scoped, or deadlines passed on it) came {@code failuresInARow}
     * times in a row: it gets no new jobs for {@code duration}. Jobs it holds go on.
     *
     * @param reason the last of those failures
     */
    default void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
    }

    /** A worker's quarantine ended: it gets one job at a time until one succeeds. */
    default void onProbation(WorkerHandle worker) {
    }

    /**
     * There is work and there are workers, but every one is quarantined; called about every few
     * seconds while that lasts. The run waits as it does without workers.
     *
     * @param workers how many workers are connected (all quarantined)
     */
    default void onAllWorkersQuarantined(Duration waited, int workers) {
    }

    /**
     * The result store failed a write: the run sends no new job until it takes one again, and
     * answers wait in memory meanwhile (see {@link SchedulerOptions.StoreRetry}). Called once per
     * outage, at its start.
     *
     * @param error what failed and why, as the store said
     * @param held  answers and failures waiting to be stored now
     */
    default void onStoreDown(String error, int held) {
    }

    /**
     * The result store took a write again after an outage: the answers it held are being stored,
     * in order, and jobs are sent again.
     *
     * @param outage how long it failed every write
     * @param held   answers and failures still waiting to be stored
     */
    default void onStoreBack(Duration outage, int held) {
    }
}
