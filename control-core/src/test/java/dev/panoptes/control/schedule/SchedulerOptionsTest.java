package dev.panoptes.control.schedule;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The scheduler's options take every value in range, the smallest included, and refuse the first
 * one out of range with a message that names the option and the value: a library user who passes
 * a zero or negative setting hears which one, instead of a run that never retries or never waits.
 */
class SchedulerOptionsTest {
    private static final Duration NEGATIVE = Duration.ofMillis(-1);
    private final SchedulerOptions defaults = SchedulerOptions.defaults();

    @Test
    void countsTakeTheirSmallestValueAndRefuseTheOneBelow() {
        assertThat(defaults.withMaxAttempts(1).maxAttempts()).isEqualTo(1);
        assertThatThrownBy(() -> defaults.withMaxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be at least 1, got 0");

        assertThat(defaults.withQuarantine(1, Duration.ZERO, Duration.ZERO).quarantineAfter()).isEqualTo(1);
        assertThatThrownBy(() -> defaults.withQuarantine(0, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("quarantineAfter must be at least 1, got 0");

        assertThat(defaults.withMaxWorkerFaults(0).maxWorkerFaults()).isZero();
        assertThatThrownBy(() -> defaults.withMaxWorkerFaults(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWorkerFaults must not be negative, got -1");
    }

    @Test
    void durationsTakeZeroAndRefuseANegativeNamingTheOption() {
        assertThat(defaults.withRetryBackoff(Duration.ZERO, Duration.ZERO).retryBackoff()).isZero();
        assertThat(defaults.withWaitForWorkers(Duration.ZERO).waitForWorkers()).isZero();
        assertThat(defaults.withJobTimeout(Duration.ZERO).jobTimeout()).isZero();

        assertRefused(() -> defaults.withRetryBackoff(NEGATIVE, Duration.ZERO), "retryBackoff must not be negative");
        assertRefused(() -> defaults.withRetryBackoff(Duration.ZERO, NEGATIVE), "maxRetryBackoff must not be negative");
        assertRefused(() -> defaults.withWaitForWorkers(NEGATIVE), "waitForWorkers must not be negative");
        assertRefused(() -> defaults.withPollInterval(NEGATIVE), "pollInterval must not be negative");
        assertRefused(() -> defaults.withJobTimeout(NEGATIVE), "jobTimeout must not be negative");
        assertRefused(() -> defaults.withQuarantine(1, NEGATIVE, Duration.ZERO), "quarantineBackoff must not be negative");
        assertRefused(() -> defaults.withQuarantine(1, Duration.ZERO, NEGATIVE),
                "maxQuarantineBackoff must not be negative");
    }

    @Test
    void thePollIntervalMustBePositive() {
        assertThat(defaults.withPollInterval(Duration.ofNanos(1)).pollInterval()).isEqualTo(Duration.ofNanos(1));
        assertThatThrownBy(() -> defaults.withPollInterval(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("pollInterval must be positive");
    }

    @Test
    void missingPartsAreNamed() {
        assertThatThrownBy(() -> defaults.withListener(null)).hasMessage("listener");
        assertThatThrownBy(() -> defaults.withGate(null)).hasMessage("gate");
        assertThatThrownBy(() -> defaults.withStoreRetry(null)).hasMessage("storeRetry");
        assertThatThrownBy(() -> defaults.withJobTimeout(null)).hasMessage("jobTimeout");
    }

    @Test
    void theStoreRetryTakesItsSmallestValuesAndRefusesTheOnesBelow() {
        SchedulerOptions.StoreRetry smallest =
                new SchedulerOptions.StoreRetry(Duration.ZERO, Duration.ZERO, Duration.ofNanos(1), 1);
        assertThat(defaults.withStoreRetry(smallest).storeRetry()).isEqualTo(smallest);

        assertRefused(() -> new SchedulerOptions.StoreRetry(NEGATIVE, Duration.ZERO, Duration.ofSeconds(1), 1),
                "store retry backoff must not be negative");
        assertRefused(() -> new SchedulerOptions.StoreRetry(Duration.ZERO, NEGATIVE, Duration.ofSeconds(1), 1),
                "store retry maxBackoff must not be negative");
        assertRefused(() -> new SchedulerOptions.StoreRetry(Duration.ZERO, Duration.ZERO, NEGATIVE, 1),
                "store maxOutage must not be negative");
        assertThatThrownBy(() -> new SchedulerOptions.StoreRetry(Duration.ZERO, Duration.ZERO, Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("store maxOutage must be positive");
        assertThatThrownBy(() -> new SchedulerOptions.StoreRetry(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1), 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("store maxHeld must be at least 1, got 0");
    }

    @Test
    void everyCopyChangesOnlyItsOwnOption() {
        SchedulerOptions changed = defaults.withMaxAttempts(7).withSkipCompleted(false)
                .withJobTimeout(Duration.ofSeconds(9)).withMaxWorkerFaults(2);
        assertThat(changed).isEqualTo(new SchedulerOptions(7, defaults.retryBackoff(), defaults.maxRetryBackoff(),
                defaults.waitForWorkers(), defaults.pollInterval(), false, defaults.listener(), Duration.ofSeconds(9),
                defaults.quarantineAfter(), defaults.quarantineBackoff(), defaults.maxQuarantineBackoff(), 2,
                defaults.gate(), defaults.storeRetry()));
    }

    private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class).hasMessage(message + ", got PT-0.001S");
    }
}
