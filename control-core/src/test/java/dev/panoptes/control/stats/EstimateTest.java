package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EstimateTest {
    @Test
    void formatsAnUnclusteredEstimateWithoutTheClusterCount() {
        // values 1, 0, 1, 1: 0.75, SE 0.25, Wilson [0.30064, 0.95441] (see AccuracyTest)
        Estimate e = Accuracy.of(List.of(
                new Sample("a", 1), new Sample("b", 0), new Sample("c", 1), new Sample("d", 1)));

        assertThat(e.format()).isEqualTo("0.750 (95% CI 0.301-0.954, SE 0.250, n=4)");
    }

    @Test
    void formatsAClusteredEstimateWithTheClusterCount() {
        // a: 1,1  b: 0,0  c: 1,0  d: 0,1: 0.5, SE sqrt(1/24) = 0.2041, Wilson(0.5, 8) [0.2152, 0.7848] (see AccuracyTest)
        Estimate e = Accuracy.of(List.of(
                new Sample("a", 1), new Sample("a", 1), new Sample("b", 0), new Sample("b", 0),
                new Sample("c", 1), new Sample("c", 0), new Sample("d", 0), new Sample("d", 1)));

        assertThat(e.format()).isEqualTo("0.500 (95% CI 0.215-0.785, SE 0.204, n=8, 4 clusters)");
    }

    @Test
    void formatsUndefinedIntervalsAndTheEmptyEstimate() {
        assertThat(Accuracy.of(List.of(new Sample("a", 1))).format()).isEqualTo("1.000 (95% CI 0.207-1.000, n=1)");
        assertThat(Accuracy.of(List.of(new Sample("a", 1), new Sample("a", 0), new Sample("a", 1))).format())
                .isEqualTo("0.667 (95% CI 0.094-0.975, n=3, 1 cluster)");
        assertThat(Estimate.empty().format()).isEqualTo("no scored samples");
    }

    @Test
    void formatIgnoresTheDefaultLocale() {
        Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.GERMANY);
            assertThat(new Estimate(30, 10, 0.7333, 0.0812, 0.652, 0.814, true).format())
                    .isEqualTo("0.733 (95% CI 0.652-0.814, SE 0.081, n=30, 10 clusters)");
        } finally {
            Locale.setDefault(saved);
        }
    }

    @Test
    void rejectsImpossibleCounts() {
        assertThatThrownBy(() -> new Estimate(-1, 0, 0, 0, 0, 0, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Estimate(3, 4, 0.5, 0.1, 0.3, 0.7, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n=3, clusters=4");
    }
}
