package dev.panoptes.control;

import java.util.concurrent.CompletionStage;

/**
 * What a worker does with a job, without a thread per job: start it and answer later.
 * {@link PooledJobRunner} adapts a naturally blocking {@link JobRunner} to it.
 *
 * <p><b>Threads.</b> {@link #start} is called on the worker session's one I/O thread, possibly
 * for many jobs at once, and must return at once: it may not block, wait or sleep (it would stall
 * every other job and the heartbeats of the session). The stage may complete on any thread of the
 * runner's own; whoever completes it should not block either. Nothing may run on
 * {@link java.util.concurrent.ForkJoinPool#commonPool()}: chain with the non-async methods of
 * {@link CompletionStage}, or the async ones with an explicit executor.
 *
 * <p><b>Failures</b> complete the stage exceptionally with a {@link ControlException} whose
 * {@link ControlException#scope()} says whose failure it is; any other exception is taken as
 * transient.
 *
 * <p><b>Cancel.</b> The session cancels {@code stage.toCompletableFuture()} (with
 * {@code cancel(true)}) when the coordinator cancels the job or the session closes; the runner
 * should then stop the job's work as soon as it can (abort its model calls).
 */
@FunctionalInterface
public interface AsyncJobRunner {
    /**
     * Starts a job.
     *
     * @return completes with one record per vignette of the job's spec, or exceptionally
     */
    CompletionStage<JobOutcome> start(Job job);

    /**
     * How many times the model API this runner calls answered HTTP 429 (too many requests) since
     * the runner was made, retried requests included; 0 when it does not know. The worker session
     * reports the increase to its coordinator, which governs the fleet's concurrency against the
     * API. Any thread.
     */
    default long throttledCount() {
        return 0;
    }
}
