package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WakeupLatencyTest {
    @Test
    void measuresEachWakeupFromTheCallToTheSelectReturning() throws InterruptedException {
        WakeupLatency.Micros m = WakeupLatency.measure(50);

        // Stamped before wakeup() and read after select returned: never free, and not anywhere
        // near the second after which a lost wake-up fails the measurement (this suite runs
        // beside other test JVMs, so no tighter bound holds here).
        assertThat(m.p50()).isPositive().isLessThan(100_000);
        assertThat(m.p90()).isGreaterThanOrEqualTo(m.p50());
        assertThat(m.toString()).matches("p50 \\d+ us, p90 \\d+ us");
    }

    @Test
    void refusesTooFewSamplesToDropAWarmUpFrom() {
        assertThatThrownBy(() -> WakeupLatency.measure(9)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 10");
    }
}
