package dev.panoptes.control.schedule;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Scheduler} retries and waits. Immutable; start from {@link #defaults()} and
 * change what you need with the {@code with...} methods.
 *
 * @param maxAttempts    dispatches of one job before it is reported failed (at least 1)
 * @param retryBackoff   delay before the first redelivery; doubled for each further one
 * @param maxRetryBackoff the cap on that delay
 * @param waitForWorkers how long a run may have work but no worker at all before it gives up
 *                       on the remaining jobs
 * @param pollInterval   how often the scheduler looks at the worker source when it cannot be
 *                       told of changes ({@link dev.panoptes.control.WorkerSource#addListener})
 * @param skipCompleted  whether jobs whose records are all in the store already are skipped
 *                       (this is what makes re-running a suite resume it)
 * @param listener       told of progress, on the scheduler's thread
 */
public record SchedulerOptions(int maxAttempts, Duration retryBackoff, Duration maxRetryBackoff,
                               Duration waitForWorkers, Duration pollInterval, boolean skipCompleted,
                               ProgressListener listener) {
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
    }

    /**
     * Three attempts, 250 ms backoff doubling to at most 5 s, one minute of waiting for
     * workers, a 250 ms poll, completed jobs skipped, no listener.
     */
    public static SchedulerOptions defaults() {
        return new SchedulerOptions(3, Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofMinutes(1),
                Duration.ofMillis(250), true, ProgressListener.NONE);
    }

    /** A copy with another attempt limit. */
    public SchedulerOptions withMaxAttempts(int value) {
        return new SchedulerOptions(value, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, listener);
    }

    /** A copy with another backoff: {@code first} for the first redelivery, doubling up to {@code max}. */
    public SchedulerOptions withRetryBackoff(Duration first, Duration max) {
        return new SchedulerOptions(maxAttempts, first, max, waitForWorkers, pollInterval, skipCompleted, listener);
    }

    /** A copy with another limit on waiting for a first (or any) worker. */
    public SchedulerOptions withWaitForWorkers(Duration value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, value, pollInterval, skipCompleted,
                listener);
    }

    /** A copy with another poll interval. */
    public SchedulerOptions withPollInterval(Duration value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, value, skipCompleted,
                listener);
    }

    /** A copy that does or does not skip jobs already complete in the store. */
    public SchedulerOptions withSkipCompleted(boolean value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval, value,
                listener);
    }

    /** A copy reporting progress to another listener. */
    public SchedulerOptions withListener(ProgressListener value) {
        return new SchedulerOptions(maxAttempts, retryBackoff, maxRetryBackoff, waitForWorkers, pollInterval,
                skipCompleted, value);
    }

    private static void requirePositiveOrZero(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, got " + d);
        }
    }
}
