package dev.panoptes.eval.http;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a {@link Call} retries: how many attempts it makes, how long it may take in all, and how
 * long it waits between attempts (a server's Retry-After, capped, else exponential backoff with
 * full jitter). Immutable; checked by {@link HttpModelClient.Builder}.
 *
 * @param maxAttempts   attempts per call, the first included
 * @param retryBudget   wall-clock time per call, retries and waits included
 * @param backoffBase   the first retry's backoff ceiling
 * @param backoffCap    the largest backoff ceiling
 * @param maxRetryAfter the longest Retry-After honoured
 */
record RetryPolicy(int maxAttempts, Duration retryBudget, Duration backoffBase, Duration backoffCap,
                   Duration maxRetryAfter) {

    /** The server's Retry-After, capped, when it sent one; else the jittered backoff. */
    Duration delay(int failedAttempts, AttemptFailure failure) {
        if (failure.retryAfter != null) {
            return failure.retryAfter.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : failure.retryAfter;
        }
        return Retries.backoff(failedAttempts, backoffBase, backoffCap, ThreadLocalRandom.current().nextDouble());
    }
}
