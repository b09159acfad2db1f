package dev.panoptes.worker;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Capped exponential backoff with jitter, for the pause between two connection attempts. The
 * n-th consecutive failure waits between half and all of {@code min(max, initial * 2^n)}: the
 * fixed half keeps a failing worker from spinning, the random half spreads a fleet's reconnects
 * after a coordinator restart. Not thread-safe: owned by the reconnect loop's thread.
 */
final class Backoff {
    private final long initialMs;
    private final long maxMs;
    private final DoubleSupplier random;
    private int failures;

    /**
     * @param random values in [0, 1); tests pass a fixed one
     */
    Backoff(Duration initial, Duration max, DoubleSupplier random) {
        this.initialMs = Math.max(1, initial.toMillis());
        this.maxMs = Math.max(initialMs, max.toMillis());
        this.random = Objects.requireNonNull(random, "random");
    }

    /** A backoff with a thread-local random source. */
    Backoff(Duration initial, Duration max) {
        this(initial, max, () -> ThreadLocalRandom.current().nextDouble());
    }

    /** The pause before the next attempt; each call counts one more consecutive failure. */
    Duration next() {
        long capMs = capFor(failures);
        failures = Math.min(failures + 1, 62);
        long halfMs = capMs / 2;
        return Duration.ofMillis(capMs - halfMs + (long) (random.getAsDouble() * halfMs));
    }

    /** Forgets past failures, after a session that ran healthily. */
    void reset() {
        failures = 0;
    }

    /** How many pauses were taken since the last reset. */
    int failures() {
        return failures;
    }

    private long capFor(int n) {
        // Shift without overflow: once initial * 2^n passes max, max it is.
        if (n >= 62 || initialMs > (maxMs >> Math.min(n, 62))) {
            return maxMs;
        }
        return Math.min(maxMs, initialMs << n);
    }
}
