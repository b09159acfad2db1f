package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StatsTest {
    @Test
    void oddCountsTakeTheMiddleValueAndKeepTheSpread() {
        Stats s = Stats.of(5, 1, 3);
        assertThat(s.median()).isEqualTo(3);
        assertThat(s.min()).isEqualTo(1);
        assertThat(s.max()).isEqualTo(5);
        assertThat(s.runs()).isEqualTo(3);
    }

    @Test
    void evenCountsAverageTheMiddleTwo() {
        assertThat(Stats.of(4, 1, 3, 2).median()).isEqualTo(2.5);
    }

    @Test
    void formatsMedianThenMinMax() {
        assertThat(Stats.of(1.25, 2.5, 10).format(1)).isEqualTo("2.5 (1.3-10.0)");
        assertThat(Stats.of(133000, 120000.4, 150000).formatRate()).isEqualTo("133,000 (120,000-150,000)");
    }

    @Test
    void refusesAnEmptySet() {
        assertThatThrownBy(Stats::of).isInstanceOf(IllegalArgumentException.class);
    }
}
