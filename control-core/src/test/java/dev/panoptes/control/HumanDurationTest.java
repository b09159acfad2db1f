package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class HumanDurationTest {
    @Test
    void readsAsAPersonWouldSayIt() {
        assertThat(HumanDuration.of(Duration.ofMillis(850))).isEqualTo("850 ms");
        assertThat(HumanDuration.of(Duration.ofMillis(1000))).isEqualTo("1 s");
        assertThat(HumanDuration.of(Duration.ofMillis(1003))).isEqualTo("1 s");
        assertThat(HumanDuration.of(Duration.ofMillis(1500))).isEqualTo("1.5 s");
        assertThat(HumanDuration.of(Duration.ofMillis(12_000))).isEqualTo("12 s");
        assertThat(HumanDuration.of(Duration.ofMillis(300_000))).isEqualTo("5 min");
        assertThat(HumanDuration.of(Duration.ofMillis(300_012))).isEqualTo("5 min");
        assertThat(HumanDuration.of(Duration.ofSeconds(150))).isEqualTo("2 min 30 s");
        assertThat(HumanDuration.of(Duration.ofMinutes(65))).isEqualTo("1 h 5 min");
        assertThat(HumanDuration.of(Duration.ofHours(2))).isEqualTo("2 h");
        assertThat(HumanDuration.of(Duration.ofMillis(-5))).isEqualTo("0 ms");
    }
}
