package dev.panoptes.control.schedule;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Scheduler} retries, waits, times out and quarantines. Immutable; start from
 * {@link #defaults()} and change what you need with the {@code with...} methods.
 *
 * @param maxAttempts          counted attempts of one job before it is reported failed (at
 *                             least 1). A dispatch the worker never received does not count, and
 *                             neither do a job's first {@code maxWorkerFaults} worker-scoped failures
 * @param retryBackoff         delay before the second redelivery; doubled for each further one
 *                             (the first redelivery goes at once: a lost connection says nothing
 *                             about the job)
 * @param maxRetryBackoff      the cap on that delay
 * @param waitForWorkers       how long a run may have work but no usable worker (none connected,
 *                             or every one quarantined) before it gives up on the remaining jobs
 * @param pollInterval         how often the scheduler looks at the worker source when it cannot
 *                             be told of changes ({@link dev.panoptes.control.WorkerSource#addListener})
 * @param skipCompleted        whether jobs whose records are all in the store already are skipped
 *                             (this is what makes re-running a suite resume it)
 * @param listener             told of progress, on the scheduler's thread
 * @param jobTimeout           the deadline of one attempt, from dispatch to answer; when it passes
 *                             the attempt fails retryably ({@link dev.panoptes.control.AttemptTimeoutException}),
 *                             its future is cancelled (asking the worker to stop the job) and the job
 *                             is sent again. {@link Duration#ZERO} means no deadline
 * @param quarantineAfter      failures in a row that are a worker's own (worker-scoped, or
 *                             deadlines passed) before it is quarantined (at least 1)
 * @param quarantineBackoff    how long a first quarantine lasts; doubled for each one in a row
 * @param maxQuarantineBackoff the cap on that
 * @param maxWorkerFaults      worker-scoped failures one job may have without spending its
 *                             attempts; each one beyond counts as an attempt (at least 0)
 * @param gate                 a limit on dispatches besides the workers' capacities (such as the
 *                             fleet's concurrency per model API); {@link DispatchGate#OPEN} for none
 * @param storeRetry           what the run does while its result store fails to write
 */
public record SchedulerOptions(int maxAttempts, Duration retryBackoff, Duration maxRetryBackoff,
                               Duration waitForWorkers, Duration pollInterval, boolean skipCompleted,
                               ProgressListener listener, Duration jobTimeout, int quarantineAfter,
                               Duration quarantineBackoff, Duration maxQuarantineBackoff, int maxWorkerFaults,
                               DispatchGate gate, StoreRetry storeRetry) {
    /** @throws IllegalArgumentException when a value is out of range */
    public SchedulerOptions {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        requirePositiveOrZero(retryBackoff, "retryBackoff");
        requirePositiveOrZero(maxRetryBackoff, "maxRetryBackoff");
        requirePositiveOrZero(waitForWorkers, "waitForWorkers");
        requirePositiveOrZero(pollInterval, "pollInterval");
        if (pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval must be positive");
        }
        Objects.requireNonNull(listener, "listener");
        requirePositiveOrZero(jobTimeout, "jobTimeout");
        if (quarantineAfter < 1) {
            throw new IllegalArgumentException("quarantineAfter must be at least 1, got " + quarantineAfter);
        }
        requirePositiveOrZero(quarantineBackoff, "quarantineBackoff");
        requirePositiveOrZero(maxQuarantineBackoff, "maxQuarantineBackoff");
        if (maxWorkerFaults < 0) {
            throw new IllegalArgumentException("maxWorkerFaults must not be negative, got " + maxWorkerFaults);
        }
        Objects.requireNonNull(gate, "gate");
        Objects.requireNonNull(storeRetry, "storeRetry");
    }

    /**
     * What a run does when its result store fails to write (a database connection lost, a SQLite
     * file locked by another process, a disk full). The write is tried again after
     * {@code backoff}, doubling up to {@code maxBackoff}, and the run sends no new job meanwhile;
     * the answers of jobs in flight wait in memory and are stored, in order, once the store takes
     * writes again. When no write has succeeded for {@code maxOutage} the run stops (what was
     * stored is kept, and running the same jobs again resumes). A record the store refuses for
     * what it holds ({@link dev.panoptes.control.store.RecordRejectedException}) is its job's own
     * failure instead.
     *
     * @param backoff    delay before the first retry of a failed write
     * @param maxBackoff the cap on that delay as it doubles
     * @param maxOutage  how long the store may fail every write before the run stops; positive
     * @param maxHeld    answers and failures waiting to be stored at which the run sends no new job
     *                   (also while the store is slow but up); at least 1. Jobs in flight still
     *                   land, so at most this many plus the run's slots in flight ever wait
     */
    public record StoreRetry(Duration backoff, Duration maxBackoff, Duration maxOutage, int maxHeld) {
        /** @throws IllegalArgumentException when a value is out of range */
        public StoreRetry {
            requirePositiveOrZero(backoff, "store retry backoff");
            requirePositiveOrZero(maxBackoff, "store retry maxBackoff");
            requirePositiveOrZero(maxOutage, "store maxOutage");
            if (maxOutage.isZero()) {
                throw new IllegalArgumentException("store maxOutage must be positive");
            }
            if (maxHeld < 1) {
                throw new IllegalArgumentException("store maxHeld must be at least 1, got " + maxHeld);
            }
        }

        /**
         * 100 ms doubling to 5 s; the run stops after 5 minutes without a write; 4,096 held (twice
         * the store writer's largest batch, so that a commit in progress does not hold dispatch back).
         */
        public static StoreRetry defaults() {
            return new StoreRetry(Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofMinutes(5), 4_096);
        }
    }

    /**
     * Three attempts, 250 ms backoff doubling to at most 5 s, one minute of waiting for
     * workers, a 250 ms poll, completed jobs skipped, no listener; a 30 minute deadline per
     * attempt; quarantine after 3 of a worker's own failures in a row, for 30 s doubling to at
     * most 10 min; 5 worker-scoped failures per job for free; {@link StoreRetry#defaults()}.
     */
    public static SchedulerOptions defaults() {
        return new SchedulerOptions(3, Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofMinutes(1),
                Duration.ofMillis(250), true, ProgressListener.NONE, Duration.ofMinutes(30), 3, Duration.ofSeconds(30),
                Duration.ofMinutes(10), 5, DispatchGate.OPEN, StoreRetry.defaults());
    }

    /** A copy with another attempt limit. */
    public SchedulerOptions withMaxAttempts(int value) {
        return new SchedulerOptions(value, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff,
                maxWorkerFaults, gate, storeRetry);
    }

    /** A copy with another backoff: {@code first} for the second redelivery, doubling up to {@code max}. */
    public SchedulerOptions withRetryBackoff(Duration first, Duration max) {
        return new SchedulerOptions(maxAttempts, first, max, waitForWorkers, pollInterval, skipCompleted, listener,
                jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff, maxWorkerFaults, gate,
                storeRetry);
    }

    /** A copy with another limit on waiting for a usable worker. */
    public SchedulerOptions withWaitForWorkers(Duration value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, value, pollInterval, skipCompleted,
                listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff, maxWorkerFaults, gate,
                storeRetry);
    }

    /** A copy with another poll interval. */
    public SchedulerOptions withPollInterval(Duration value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, value, skipCompleted,
                listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff, maxWorkerFaults, gate,
                storeRetry);
    }

    /** A copy that does or does not skip jobs already complete in the store. */
    public SchedulerOptions withSkipCompleted(boolean value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval, value,
                listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff, maxWorkerFaults, gate,
                storeRetry);
    }

    /** A copy reporting progress to another listener. */
    public SchedulerOptions withListener(ProgressListener value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, value, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff,
                maxWorkerFaults, gate, storeRetry);
    }

    /** A copy with another deadline per attempt; {@link Duration#ZERO} for none. */
    public SchedulerOptions withJobTimeout(Duration value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, value, quarantineAfter, quarantineBackoff, maxQuarantineBackoff,
                maxWorkerFaults, gate, storeRetry);
    }

    /**
     * A copy with another quarantine rule: after {@code failuresInARow} of a worker's own
     * failures, no new jobs for {@code first}, doubling per quarantine in a row up to {@code max}.
     */
    public SchedulerOptions withQuarantine(int failuresInARow, Duration first, Duration max) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, jobTimeout, failuresInARow, first, max, maxWorkerFaults, gate, storeRetry);
    }

    /** A copy with another number of worker-scoped failures a job may have without spending attempts. */
    public SchedulerOptions withMaxWorkerFaults(int value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff, value,
                gate, storeRetry);
    }

    private static void requirePositiveOrZero(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, got " + d);
        }
    }

    /** A copy with another policy for a result store that fails to write (see {@link StoreRetry}). */
    public SchedulerOptions withStoreRetry(StoreRetry value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff,
                maxWorkerFaults, gate, value);
    }

    /** A copy with a dispatch gate (see {@link DispatchGate}). */
    public SchedulerOptions withGate(DispatchGate value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener, jobTimeout, quarantineAfter, quarantineBackoff, maxQuarantineBackoff,
                maxWorkerFaults, value, storeRetry);
    }
}
