package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class AccuracyTest {
    private static final double EXACT = 1e-12;

    @Test
    void singletonsGetTheOrdinaryStandardErrorOfTheMean() {
        // values 1, 0, 1, 1: mean = 3/4 = 0.75
        // residuals 0.25, -0.75, 0.25, 0.25; squares 0.0625 + 0.5625 + 0.0625 + 0.0625 = 0.75
        // s^2 = 0.75 / (4 - 1) = 0.25, s = 0.5, SE = 0.5 / sqrt(4) = 0.25
        // no repeats, so the interval is the textbook Wilson interval of 3/4 (n_eff = n = 4):
        // centre (0.75 + 3.8415/8) / (1 + 3.8415/4) = 0.62754, half width 0.32689: [0.30064, 0.95441]
        // (Wald would say 0.75 -+ 0.49 = [0.26, 1.24]).
        Estimate e = Accuracy.of(samples("a", 1, "b", 0, "c", 1, "d", 1));

        assertThat(e.n()).isEqualTo(4);
        assertThat(e.clusters()).isEqualTo(4);
        assertThat(e.clustered()).isFalse();
        assertThat(e.mean()).isCloseTo(0.75, within(EXACT));
        assertThat(e.standardError()).isCloseTo(0.25, within(EXACT));
        assertThat(e.effectiveN()).isEqualTo(4.0);
        assertThat(e.ciLow()).isCloseTo(0.30064184258240184, within(EXACT));
        assertThat(e.ciHigh()).isCloseTo(0.9544127391902995, within(EXACT));
        assertThat(e.hasInterval()).isTrue();
    }

    @Test
    void repeatedVignettesGetTheClusterRobustStandardError() {
        // a: 1,1,0   b: 0,0,0   c: 1,1,1   -> n = 9, G = 3, sum = 2 + 0 + 3 = 5, m = 5/9
        // S_a = 2 - 3m = 18/9 - 15/9 = 1/3
        // S_b = 0 - 3m = -15/9 = -5/3
        // S_c = 3 - 3m = 27/9 - 15/9 = 4/3
        // sum S_g^2 = 1/9 + 25/9 + 16/9 = 42/9
        // G/(G-1) * 42/9 = 3/2 * 42/9 = 126/18 = 7
        // SE = sqrt(7) / 9 = 2.6457513110645906 / 9 = 0.29397236789606563
        // residuals: five 1s at +4/9, four 0s at -5/9: sum r^2 = (80 + 100) / 81 = 20/9
        // deff = (42/9) / (20/9) = 2.1, n_eff = 9 / 2.1 = 4.2857; Wilson(5/9, 4.2857) = [0.18666, 0.87193]
        Estimate e = Accuracy.of(samples(
                "a", 1, "a", 1, "a", 0,
                "b", 0, "b", 0, "b", 0,
                "c", 1, "c", 1, "c", 1));

        assertThat(e.n()).isEqualTo(9);
        assertThat(e.clusters()).isEqualTo(3);
        assertThat(e.clustered()).isTrue();
        assertThat(e.mean()).isCloseTo(5.0 / 9, within(EXACT));
        assertThat(e.standardError()).isCloseTo(Math.sqrt(7) / 9, within(EXACT));
        assertThat(e.standardError()).isCloseTo(0.29397236789606563, within(EXACT));
        assertThat(e.effectiveN()).isCloseTo(9 / 2.1, within(EXACT));
        assertThat(e.ciLow()).isCloseTo(0.18666252831294644, within(1e-12));
        assertThat(e.ciHigh()).isCloseTo(0.8719298592190716, within(1e-12));
    }

    @Test
    void epochsThatDisagreeAsMuchAsVignettesDoKeepTheFullSampleSize() {
        // a: 1,1   b: 0,0   c: 1,0   d: 0,1   -> n = 8, G = 4, m = 4/8 = 0.5
        // S_a = 2 - 1 = 1, S_b = 0 - 1 = -1, S_c = 1 - 1 = 0, S_d = 0
        // sum S_g^2 = 2; G/(G-1) * 2 = 4/3 * 2 = 8/3
        // SE = sqrt(8/3) / 8 = sqrt(8 / (3 * 64)) = sqrt(1/24) = 0.20412414523193148
        // sum r^2 = 8 * 0.25 = 2 = sum S_g^2: deff = 1, n_eff = 8; Wilson(0.5, 8) = [0.21522, 0.78478]
        Estimate e = Accuracy.of(samples(
                "a", 1, "a", 1, "b", 0, "b", 0, "c", 1, "c", 0, "d", 0, "d", 1));

        assertThat(e.clustered()).isTrue();
        assertThat(e.mean()).isEqualTo(0.5);
        assertThat(e.standardError()).isCloseTo(Math.sqrt(1.0 / 24), within(EXACT));
        assertThat(e.effectiveN()).isEqualTo(8.0);
        assertThat(e.ciLow()).isCloseTo(0.21521606221387757, within(1e-12));
        assertThat(e.ciHigh()).isCloseTo(0.7847839377861224, within(1e-12));
    }

    @Test
    void oneRepeatedVignetteAmongSingletonsMakesTheWholeEstimateClustered() {
        // a: 1,1   b: 0   c: 1   -> n = 4, G = 3, m = 3/4
        // S_a = 2 - 2m = 0.5, S_b = 0 - 0.75 = -0.75, S_c = 1 - 0.75 = 0.25
        // sum S_g^2 = 0.25 + 0.5625 + 0.0625 = 0.875; G/(G-1) * 0.875 = 1.5 * 0.875 = 1.3125
        // SE = sqrt(1.3125) / 4 = 1.1456439237389600 / 4 = 0.28641098093474
        Estimate e = Accuracy.of(samples("a", 1, "a", 1, "b", 0, "c", 1));

        assertThat(e.clustered()).isTrue();
        assertThat(e.clusters()).isEqualTo(3);
        assertThat(e.standardError()).isCloseTo(Math.sqrt(1.3125) / 4, within(EXACT));
        assertThat(e.standardError()).isCloseTo(0.28641098093474, within(1e-12));
        // sum r^2 = 3 * 0.0625 + 0.5625 = 0.75; deff = 0.875 / 0.75 = 7/6; n_eff = 24/7 = 3.4286
        assertThat(e.effectiveN()).isCloseTo(24.0 / 7, within(EXACT));
        assertThat(e.ciLow()).isCloseTo(0.2765439664183088, within(1e-12));
    }

    @Test
    void clusteringWidensTheErrorWhenEpochsAgreeWithinAVignette() {
        // a: 1,1   b: 0,0   c: 1,1   d: 1,1   -> n = 8, G = 4, m = 6/8 = 0.75
        // clustered: S_a = S_c = S_d = 2 - 1.5 = 0.5, S_b = -1.5
        //   sum S_g^2 = 3 * 0.25 + 2.25 = 3; 4/3 * 3 = 4; SE = sqrt(4) / 8 = 0.25
        // naive (all 8 treated as independent): six residuals 0.25, two -0.75
        //   sum sq = 6 * 0.0625 + 2 * 0.5625 = 1.5; s^2 = 1.5 / 7; SE = sqrt(1.5 / 7 / 8) = 0.16366341767699427
        List<Sample> epochs = samples("a", 1, "a", 1, "b", 0, "b", 0, "c", 1, "c", 1, "d", 1, "d", 1);
        Estimate clustered = Accuracy.of(epochs);
        Estimate naive = Accuracy.of(asIndependent(epochs));

        assertThat(clustered.standardError()).isCloseTo(0.25, within(EXACT));
        assertThat(naive.clustered()).isFalse();
        assertThat(naive.standardError()).isCloseTo(Math.sqrt(1.5 / 7 / 8), within(EXACT));
        assertThat(clustered.standardError()).isGreaterThan(naive.standardError());
        // Two identical epochs carry no more information than one: the clustered SE equals the
        // ordinary SE of a single epoch, values 1, 0, 1, 1 (0.25, see the singletons test).
        Estimate oneEpoch = Accuracy.of(samples("a", 1, "b", 0, "c", 1, "d", 1));
        assertThat(clustered.standardError()).isCloseTo(oneEpoch.standardError(), within(EXACT));
        // ... and the same interval: deff = 2, so n_eff = 4 vignettes, not 8 answers.
        assertThat(clustered.effectiveN()).isCloseTo(4.0, within(EXACT));
        assertThat(clustered.ciLow()).isCloseTo(oneEpoch.ciLow(), within(EXACT));
        assertThat(clustered.ciHigh()).isCloseTo(oneEpoch.ciHigh(), within(EXACT));
        assertThat(naive.ciHigh() - naive.ciLow()).isLessThan(clustered.ciHigh() - clustered.ciLow());
    }

    @Test
    void aSingleSampleHasAWideWilsonIntervalButNoStandardError() {
        Estimate e = Accuracy.of(samples("a", 0.7));

        assertThat(e.n()).isEqualTo(1);
        assertThat(e.mean()).isEqualTo(0.7);
        assertThat(e.hasStandardError()).isFalse();
        assertThat(e.standardError()).isNaN();
        // Wilson(0.7, 1) = [0.10335, 0.97927]
        assertThat(e.ciLow()).isCloseTo(0.10335186991106576, within(1e-12));
        assertThat(e.ciHigh()).isCloseTo(0.9792678558398291, within(1e-12));
    }

    @Test
    void oneVignetteAskedSeveralTimesCountsAsOneSampleForItsInterval() {
        // a: 1,0,1 -> m = 2/3, clustered with G = 1, G/(G-1) undefined: no SE, n_eff = G = 1
        Estimate e = Accuracy.of(samples("a", 1, "a", 0, "a", 1));

        assertThat(e.clustered()).isTrue();
        assertThat(e.clusters()).isEqualTo(1);
        assertThat(e.mean()).isCloseTo(2.0 / 3, within(EXACT));
        assertThat(e.hasStandardError()).isFalse();
        assertThat(e.effectiveN()).isEqualTo(1.0);
        assertThat(e.ciLow()).isCloseTo(0.09418601510558017, within(1e-12));
    }

    @Test
    void identicalScoresGiveExactlyZeroErrorAndTheScoreItselfAsMean() {
        // 0.1 * 5 / 5 need not be 0.1 in floating point; the estimate must still say exactly 0.1, SE 0.
        Estimate singletons = Accuracy.of(samples("a", 0.1, "b", 0.1, "c", 0.1, "d", 0.1, "e", 0.1));
        Estimate clustered = Accuracy.of(samples("a", 0.1, "a", 0.1, "b", 0.1, "b", 0.1));

        for (Estimate e : List.of(singletons, clustered)) {
            assertThat(e.mean()).isEqualTo(0.1);
            assertThat(e.standardError()).isEqualTo(0.0);
            // No spread is no evidence of no uncertainty: the interval keeps its width.
            assertThat(e.ciHigh() - e.ciLow()).isGreaterThan(0.4);
        }
        // The design effect is 0/0 without spread: n_eff is the number of vignettes.
        assertThat(singletons.effectiveN()).isEqualTo(5.0);
        assertThat(clustered.effectiveN()).isEqualTo(2.0);
        assertThat(clustered.ciHigh()).isCloseTo(0.721349432790182, within(1e-12));
    }

    @Test
    void allRightIsNotCertainty() {
        // The issue's "1.000 ± 0.000 (95% CI 1.000-1.000, n=14)": 14 of 14 is Wilson [0.78469, 1].
        List<Sample> fourteen = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            fourteen.add(new Sample("v" + i, 1));
        }
        Estimate e = Accuracy.of(fourteen);
        assertThat(e.ciLow()).isCloseTo(0.7846891972623643, within(1e-12));
        assertThat(e.ciHigh()).isEqualTo(1.0);
        // Asked in three epochs, all agreeing: still 14 vignettes' worth of evidence.
        List<Sample> epochs = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            epochs.addAll(fourteen);
        }
        Estimate clustered = Accuracy.of(epochs);
        assertThat(clustered.effectiveN()).isEqualTo(14.0);
        assertThat(clustered.ciLow()).isEqualTo(e.ciLow());
        // All wrong: [0, z^2 / (n + z^2)].
        Estimate wrong = Accuracy.of(samples("a", 0, "b", 0, "c", 0));
        assertThat(wrong.ciLow()).isZero();
        assertThat(wrong.ciHigh()).isCloseTo(Accuracy.Z_95 * Accuracy.Z_95 / (3 + Accuracy.Z_95 * Accuracy.Z_95),
                within(1e-12));
    }

    @Test
    void noSamplesGiveTheEmptyEstimate() {
        Estimate e = Accuracy.of(List.of());

        assertThat(e).isEqualTo(Estimate.empty());
        assertThat(e.n()).isZero();
        assertThat(e.clusters()).isZero();
        assertThat(e.mean()).isNaN();
        assertThat(e.hasInterval()).isFalse();
    }

    @Test
    void nonFiniteScoresAndMissingClustersAreRejected() {
        assertThatThrownBy(() -> new Sample("q1", Double.NaN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("finite").hasMessageContaining("q1");
        assertThatThrownBy(() -> new Sample("q1", Double.POSITIVE_INFINITY))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Sample(null, 1.0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Accuracy.of(Arrays.asList(new Sample("a", 1), null)))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("samples[1]");
    }

    @Test
    void byGroupKeepsOrderOfFirstAppearanceAndTreatsNullAsAGroup() {
        // m2: 1, 0       -> mean 0.5
        // null: 1, 1     -> mean 1.0
        // m1: 0, 0, 1    -> mean 1/3
        List<Sample> samples = samples("a", 1, "a", 1, "a", 0, "b", 0, "b", 0, "c", 1, "c", 1);
        List<String> keys = Arrays.asList("m2", null, "m1", "m2", "m1", null, "m1");

        Map<String, Estimate> byModel = Accuracy.byGroup(samples, keys);

        assertThat(byModel.keySet()).containsExactly("m2", null, "m1");
        assertThat(byModel.get("m2").mean()).isEqualTo(0.5);
        assertThat(byModel.get("m2").n()).isEqualTo(2);
        assertThat(byModel.get(null).mean()).isEqualTo(1.0);
        assertThat(byModel.get("m1").mean()).isCloseTo(1.0 / 3, within(EXACT));
        assertThat(byModel.get("m1").n()).isEqualTo(3);
        // Within m1 the vignettes are a, b, c, one sample each, so m1 alone is not clustered.
        assertThat(byModel.get("m1").clustered()).isFalse();
        assertThatThrownBy(() -> byModel.put("m3", Estimate.empty()))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void byGroupRejectsKeysThatAreNotParallelToTheSamples() {
        assertThatThrownBy(() -> Accuracy.byGroup(samples("a", 1, "b", 0), List.of("m1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2 samples and 1 keys");
    }

    @Test
    void byGroupOfNoSamplesIsEmpty() {
        assertThat(Accuracy.byGroup(List.of(), List.<String>of())).isEmpty();
    }

    @Test
    void largeRunMatchesAnIndependentNaiveComputation() {
        // 40 000 vignettes with 1 to 5 epochs each; each vignette has its own difficulty so the
        // epochs correlate, and scores are partial credit in [0, 1].
        Random random = new Random(20240607L);
        List<Sample> samples = new ArrayList<>();
        for (int v = 0; v < 40_000; v++) {
            double difficulty = random.nextDouble();
            int epochs = 1 + random.nextInt(5);
            for (int k = 0; k < epochs; k++) {
                double score = random.nextDouble() < difficulty ? 1.0 : random.nextDouble() * 0.5;
                samples.add(new Sample("v" + v, score));
            }
        }

        Estimate clustered = Accuracy.of(samples);
        Estimate independent = Accuracy.of(asIndependent(samples));

        double[] expectedClustered = naiveClustered(samples);
        double[] expectedIndependent = naiveIndependent(samples);
        assertThat(clustered.clustered()).isTrue();
        assertThat(clustered.clusters()).isEqualTo(40_000);
        assertThat(clustered.mean()).isCloseTo(expectedClustered[0], within(1e-12));
        assertThat(clustered.standardError()).isCloseTo(expectedClustered[1], within(1e-12));
        assertThat(independent.mean()).isCloseTo(expectedIndependent[0], within(1e-12));
        assertThat(independent.standardError()).isCloseTo(expectedIndependent[1], within(1e-12));
        double[] wilson = Wilson.interval(clustered.mean(), clustered.effectiveN(), Accuracy.Z_95);
        assertThat(clustered.ciLow()).isEqualTo(wilson[0]);
        assertThat(clustered.effectiveN()).isCloseTo(expectedClustered[2], within(1e-6));
        assertThat(clustered.standardError()).isGreaterThan(independent.standardError());
    }

    /**
     * Cluster-robust SE from per-cluster totals T_g and counts n_g, S_g = T_g - n_g * m: a
     * different route to the same formula than the residual-by-residual one under test.
     */
    private static double[] naiveClustered(List<Sample> samples) {
        Map<String, double[]> totals = new HashMap<>();
        double sum = 0;
        for (Sample s : samples) {
            double[] t = totals.computeIfAbsent(s.cluster(), k -> new double[2]);
            t[0] += s.value();
            t[1] += 1;
            sum += s.value();
        }
        int n = samples.size();
        int g = totals.size();
        double mean = sum / n;
        double squares = 0;
        for (double[] t : totals.values()) {
            double s = t[0] - t[1] * mean;
            squares += s * s;
        }
        double residualSquares = 0;
        for (Sample s : samples) {
            residualSquares += (s.value() - mean) * (s.value() - mean);
        }
        return new double[] {mean, Math.sqrt((double) g / (g - 1) * squares) / n,
            n / Math.max(1, squares / residualSquares)};
    }

    /** Textbook one-pass variance, (sum x^2 - n m^2) / (n - 1); fine for values in [0, 1]. */
    private static double[] naiveIndependent(List<Sample> samples) {
        double sum = 0;
        double sumSquares = 0;
        for (Sample s : samples) {
            sum += s.value();
            sumSquares += s.value() * s.value();
        }
        int n = samples.size();
        double mean = sum / n;
        double variance = (sumSquares - n * mean * mean) / (n - 1);
        return new double[] {mean, Math.sqrt(variance / n)};
    }

    /** The same values with every sample in a cluster of its own. */
    private static List<Sample> asIndependent(List<Sample> samples) {
        List<Sample> out = new ArrayList<>(samples.size());
        for (int i = 0; i < samples.size(); i++) {
            out.add(new Sample("#" + i, samples.get(i).value()));
        }
        return out;
    }

    /** samples("a", 1, "a", 0, ...) -> [Sample(a, 1), Sample(a, 0), ...]. */
    private static List<Sample> samples(Object... clusterValuePairs) {
        List<Sample> out = new ArrayList<>();
        for (int i = 0; i < clusterValuePairs.length; i += 2) {
            out.add(new Sample((String) clusterValuePairs[i], ((Number) clusterValuePairs[i + 1]).doubleValue()));
        }
        return out;
    }

    @Test
    void runningTotalsGiveTheTwoPassResidualFiguresOfTheSamples() {
        // The summary streams answers into per-vignette totals; the figures must be those of the
        // residuals about the overall mean, computed here the textbook way from the samples.
        Random random = new Random(32);
        List<Sample> samples = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            String vignette = "v" + random.nextInt(700);
            samples.add(new Sample(vignette, random.nextInt(4) == 0 ? random.nextDouble() : random.nextInt(2)));
        }
        double mean = samples.stream().mapToDouble(Sample::value).sum() / samples.size();
        Map<String, Double> residualSums = new HashMap<>();
        double squares = 0;
        for (Sample s : samples) {
            residualSums.merge(s.cluster(), s.value() - mean, Double::sum);
            squares += (s.value() - mean) * (s.value() - mean);
        }
        double clusterSquares = residualSums.values().stream().mapToDouble(r -> r * r).sum();
        int g = residualSums.size();
        int n = samples.size();
        ClusteredMean streamed = new ClusteredMean();
        samples.forEach(s -> streamed.add(s.cluster(), s.value()));

        Estimate e = streamed.estimate();

        assertThat(e).isEqualTo(Accuracy.of(samples));
        assertThat(e.clustered()).isTrue();
        assertThat(e.clusters()).isEqualTo(g);
        assertThat(e.mean()).isCloseTo(mean, within(EXACT));
        assertThat(e.standardError()).isCloseTo(Math.sqrt((double) g / (g - 1) * clusterSquares) / n, within(EXACT));
        assertThat(e.effectiveN()).isCloseTo(n / Math.max(clusterSquares / squares, 1.0), within(1e-9));
    }
}
