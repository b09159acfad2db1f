package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class WilsonTest {
    private static final double Z = Accuracy.Z_95;

    @Test
    void matchesNewcombesTextbookExamples() {
        // Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3 (Wilson score, no
        // continuity correction), to the four decimals printed there.
        assertInterval(81, 263, 0.2553, 0.3662);
        assertInterval(15, 148, 0.0624, 0.1605);
        assertInterval(0, 20, 0.0000, 0.1611);
        assertInterval(1, 29, 0.0061, 0.1718);
    }

    @Test
    void allRightOrAllWrongGivesAnIntervalOfRealWidthThatTouchesTheEdge() {
        // n/n: low = n / (n + z^2); 7/7: 7 / (7 + 3.8415) = 0.64567.
        double[] allRight = Wilson.interval(1.0, 7, Z);
        assertThat(allRight[0]).isCloseTo(7 / (7 + Z * Z), within(1e-12));
        assertThat(allRight[1]).isEqualTo(1.0);
        // 0/n: high = z^2 / (n + z^2); 0/10: 3.8415 / 13.8415 = 0.27753.
        double[] allWrong = Wilson.interval(0.0, 10, Z);
        assertThat(allWrong[0]).isEqualTo(0.0);
        assertThat(allWrong[1]).isCloseTo(Z * Z / (10 + Z * Z), within(1e-12));
        // One answer, right: 1 / (1 + 3.8415) = 0.20655.
        assertThat(Wilson.interval(1.0, 1, Z)[0]).isCloseTo(0.20654931437723745, within(1e-12));
    }

    @Test
    void smallSamplesAreFarWiderThanWaldWouldSay() {
        // 3 of 4: Wald gives 0.750 -+ 0.424 = [0.326, 1.174]; Wilson [0.3006, 0.9544].
        double[] ci = Wilson.interval(0.75, 4, Z);
        assertThat(ci[0]).isCloseTo(0.30064184258240184, within(1e-12));
        assertThat(ci[1]).isCloseTo(0.9544127391902995, within(1e-12));
    }

    @Test
    void anEffectiveSampleSizeNeedNotBeWhole() {
        double[] lower = Wilson.interval(0.5, 7.5, Z);
        double[] n7 = Wilson.interval(0.5, 7, Z);
        double[] n8 = Wilson.interval(0.5, 8, Z);
        assertThat(lower[0]).isBetween(n7[0], n8[0]);
    }

    @Test
    void alwaysLiesInTheUnitRangeAndContainsTheEstimate() {
        Random random = new Random(18L);
        for (int i = 0; i < 20_000; i++) {
            double n = i % 3 == 0 ? 1 + random.nextInt(5) : 0.01 + random.nextDouble() * (i % 2 == 0 ? 50 : 1e7);
            double p = switch (i % 5) {
                case 0 -> 0.0;
                case 1 -> 1.0;
                case 2 -> Math.min(1, Math.round(random.nextDouble() * n) / n);
                default -> random.nextDouble();
            };
            double[] ci = Wilson.interval(p, n, Z);
            assertThat(ci[0]).as("p=%s n=%s", p, n).isBetween(0.0, p);
            assertThat(ci[1]).as("p=%s n=%s", p, n).isBetween(p, 1.0);
        }
    }

    @Test
    void accuracyIntervalsAlwaysLieInTheUnitRangeAndContainTheMean() {
        // The property at the level reports use it: random runs with repeats, partial credit,
        // all-equal scores and single vignettes.
        Random random = new Random(4L);
        for (int run = 0; run < 2_000; run++) {
            List<Sample> samples = new ArrayList<>();
            int vignettes = 1 + random.nextInt(12);
            double constant = random.nextInt(3) / 2.0;
            for (int v = 0; v < vignettes; v++) {
                int epochs = 1 + random.nextInt(run % 2 == 0 ? 1 : 4);
                for (int e = 0; e < epochs; e++) {
                    double score = switch (run % 4) {
                        case 0 -> random.nextBoolean() ? 1 : 0;
                        case 1 -> random.nextDouble();
                        case 2 -> constant;
                        default -> random.nextDouble() < 0.9 ? 1 : 0;
                    };
                    samples.add(new Sample("v" + v, score));
                }
            }
            Estimate e = Accuracy.of(samples);
            assertThat(e.hasInterval()).isTrue();
            assertThat(e.ciLow()).as("%s", samples).isBetween(0.0, e.mean());
            assertThat(e.ciHigh()).as("%s", samples).isBetween(e.mean(), 1.0);
            assertThat(e.effectiveN()).isGreaterThan(0).isLessThanOrEqualTo(e.n());
        }
    }

    @Test
    void rejectsWhatHasNoInterval() {
        assertThatThrownBy(() -> Wilson.interval(0.5, 0, Z)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n=0.0");
        assertThatThrownBy(() -> Wilson.interval(Double.NaN, 3, Z)).isInstanceOf(IllegalArgumentException.class);
    }

    private static void assertInterval(int x, int n, double low, double high) {
        double[] ci = Wilson.interval((double) x / n, n, Z);
        assertThat(ci[0]).as("%d/%d low", x, n).isCloseTo(low, within(0.00005));
        assertThat(ci[1]).as("%d/%d high", x, n).isCloseTo(high, within(0.00005));
    }
}
