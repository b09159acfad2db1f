package dev.panoptes.worker;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffTest {
    @Test
    void doublesFromTheInitialDelayUpToTheCap() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.999999);

        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(99));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(199));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(399));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(799));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(999));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(999));
    }

    @Test
    void neverWaitsLessThanHalfOfTheCurrentStep() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.0);

        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(50));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(100));
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void staysAtTheCapAfterVeryManyFailures() {
        Backoff backoff = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30), () -> 0.5);

        for (int i = 0; i < 200; i++) {
            assertThat(backoff.next()).isBetween(Duration.ofMillis(250), Duration.ofSeconds(30));
        }
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(22_500));
    }

    @Test
    void startsOverAfterAReset() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.0);
        backoff.next();
        backoff.next();
        backoff.next();

        backoff.reset();

        assertThat(backoff.failures()).isZero();
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(50));
    }
}
