package dev.panoptes.control.schedule;

import dev.panoptes.control.AttemptTimeoutException;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * Decides what a failed attempt costs and what comes of its job: sent again at once without
 * spending an attempt (a refused dispatch, a worker's own fault), sent again after a backoff that
 * doubles up to a cap, or failed for good; and whether the worker is charged a strike towards
 * quarantine. The job goes back to {@link WaitingJobs}, or to the failure sink.
 *
 * <p>Owned by the thread running the scheduler's {@code run}; not thread-safe. Its counters live
 * in each job's {@link JobState}, so it holds no state of its own beyond what it was given.
 */
final class Retries {
    private static final Logger log = LoggerFactory.getLogger(Retries.class);
    /** Refused dispatches of one job in a row that are retried at once; later ones wait a little. */
    private static final int REFUSALS_BEFORE_PAUSE = 3;
    private static final long REFUSAL_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final SchedulerOptions options;
    private final ProgressListener listener;
    private final Quarantine quarantine;
    private final WaitingJobs waiting;
    private final LongSupplier clock;
    /** Fails a job for good, with the reason. */
    private final BiConsumer<JobState, String> fail;

    Retries(SchedulerOptions options, Quarantine quarantine, WaitingJobs waiting, LongSupplier clock,
            BiConsumer<JobState, String> fail) {
        this.options = options;
        this.listener = options.listener();
        this.quarantine = quarantine;
        this.waiting = waiting;
        this.clock = clock;
        this.fail = fail;
    }

    /**
     * An attempt of the job on {@code worker} failed with {@code cause} (unwrapped; a deadline's
     * cancellation already turned into an {@link AttemptTimeoutException}).
     */
    void onFailure(JobState state, WorkerHandle worker, Throwable cause) {
        String reason = String.valueOf(cause.getMessage() == null ? cause : cause.getMessage());
        if (cause instanceof DispatchRefusedException) {
            // It never reached the worker: nothing happened that should cost the job an attempt.
            state.attempts--;
            state.failedOn.add(worker);
            if (++state.refusalsInARow <= REFUSALS_BEFORE_PAUSE) {
                retryNow(state, worker, cause, reason);
            } else {
                // A handle that refuses everything and stays in the source (a local worker closed
                // but not removed, say) must not make the run spin: pause the job a little.
                waiting.delay(state, clock.getAsLong() + REFUSAL_PAUSE_NANOS);
                listener.onRetry(state.job, worker, cause, state.attempts, Duration.ofNanos(REFUSAL_PAUSE_NANOS));
            }
            return;
        }
        state.refusalsInARow = 0;
        FailureScope scope = cause instanceof ControlException ce ? ce.scope() : FailureScope.TRANSIENT;
        switch (scope) {
            case JOB:
                quarantine.onJobFailure(worker);
                fail.accept(state, reason);
                return;
            case WORKER:
                strike(worker, reason);
                state.workerFaults++;
                state.failedOn.add(worker);
                if (state.workerFaults <= options.maxWorkerFaults()) {
                    state.attempts--;
                    retryNow(state, worker, cause, reason);
                    return;
                }
                reason = reason + " (the job's " + state.workerFaults + "th worker-scoped failure; beyond "
                        + options.maxWorkerFaults() + " they count as attempts)";
                break;
            default:
                if (cause instanceof AttemptTimeoutException) {
                    strike(worker, reason);
                }
                break;
        }
        retryCounted(state, worker, cause, reason);
    }

    /** Sends the job again at once, to another worker when there is one, without spending an attempt. */
    private void retryNow(JobState state, WorkerHandle worker, Throwable cause, String reason) {
        waiting.addFirst(state);
        log.debug("worker={} job={} - not counted as an attempt, sending again now: {}", worker.id(), state.job.id(),
                reason);
        listener.onRetry(state.job, worker, cause, state.attempts, Duration.ZERO);
    }

    /** A failure that spends an attempt: sent again after the backoff, or final at the limit. */
    private void retryCounted(JobState state, WorkerHandle worker, Throwable cause, String reason) {
        if (state.attempts >= options.maxAttempts()) {
            fail.accept(state, "gave up after " + Plural.of(state.attempts, "attempt") + "; last failure: " + reason);
            return;
        }
        state.failedOn.add(worker);
        Duration delay = backoff(state.attempts);
        if (delay.isZero()) {
            state.dueNanos = clock.getAsLong();
            waiting.addFirst(state);
        } else {
            waiting.delay(state, clock.getAsLong() + delay.toNanos());
        }
        log.info("worker={} job={} - attempt {} failed retryably, sending again in {} ms: {}", worker.id(),
                state.job.id(), state.attempts, delay.toMillis(), reason);
        listener.onRetry(state.job, worker, cause, state.attempts, delay);
    }

    /** Charges a failure to the worker itself; enough of them in a row quarantine it. */
    private void strike(WorkerHandle worker, String reason) {
        Quarantine.Verdict verdict = quarantine.strike(worker, reason, clock.getAsLong());
        if (verdict.quarantined()) {
            log.info("worker={} - quarantined: {} {} its own, not its jobs' (last: {});"
                    + " no new jobs for {} s", worker.id(), Plural.of(verdict.strikes(), "failure"),
                    verdict.strikes() == 1 ? "was" : "in a row were", reason, verdict.duration().toSeconds());
            listener.onQuarantined(worker, reason, verdict.strikes(), verdict.duration());
        }
    }

    /** No delay before the first redelivery; then the configured backoff, doubling, capped. */
    private Duration backoff(int attemptsMade) {
        if (attemptsMade <= 1) {
            return Duration.ZERO;
        }
        long base = options.retryBackoff().toNanos();
        long cap = options.maxRetryBackoff().toNanos();
        int doublings = Math.min(attemptsMade - 2, 30);
        long delay = base > cap >> doublings ? cap : base << doublings;
        return Duration.ofNanos(Math.min(delay, cap));
    }
}
