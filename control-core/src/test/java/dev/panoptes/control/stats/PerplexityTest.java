package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** lm-eval's perplexity, exp(-mean ll), with a t interval on the mean log-likelihood mapped through exp(-x). */
class PerplexityTest {
    @Test
    void perplexityIsExpOfMinusTheMeanAndItsIntervalTheMeansTIntervalThroughExpMinusX() {
        List<Sample> lls = List.of(new Sample("0", -1.0), new Sample("1", -2.0), new Sample("2", -3.0),
                new Sample("3", -6.0));
        Perplexity.Figure f = Perplexity.of(lls);

        // mean -3, s = sqrt(((2^2 + 1 + 0 + 3^2)) / 3) = sqrt(14/3), SE = s / 2; t(0.975, 3) = 3.182446305284263.
        double se = Math.sqrt(14.0 / 3) / 2;
        double t = 3.182446305284263;
        assertThat(f.n()).isEqualTo(4);
        assertThat(f.clustered()).isFalse();
        assertThat(f.meanLoglikelihood()).isEqualTo(-3.0);
        assertThat(f.perplexity()).isCloseTo(Math.exp(3.0), within(1e-12));
        assertThat(f.loglikelihoodStandardError()).isCloseTo(se, within(1e-12));
        assertThat(f.standardError()).isCloseTo(Math.exp(3.0) * se, within(1e-9));
        assertThat(f.ciLow()).isCloseTo(Math.exp(3.0 - t * se), within(1e-6));
        assertThat(f.ciHigh()).isCloseTo(Math.exp(3.0 + t * se), within(1e-6));
        assertThat(f.ciLow()).isLessThan(f.perplexity());
        assertThat(f.ciHigh()).isGreaterThan(f.perplexity());
        assertThat(f.format()).startsWith("20.086 (95% CI ").contains("mean ll -3.0000, n=4)");
    }

    @Test
    void epochsOfOneDocumentAreOneClusterAndTheDegreesOfFreedomCountDocuments() {
        // Two documents asked twice each; the clustered SE with G = 2: sqrt(2/1 * (S1^2 + S2^2)) / 4.
        List<Sample> lls = List.of(new Sample("a", -1.0), new Sample("a", -1.2), new Sample("b", -3.0),
                new Sample("b", -2.8));
        Perplexity.Figure f = Perplexity.of(lls);
        double m = -2.0;
        double s1 = (-1.0 - m) + (-1.2 - m);
        double s2 = (-3.0 - m) + (-2.8 - m);
        double se = Math.sqrt(2.0 * (s1 * s1 + s2 * s2)) / 4;
        double t = 12.706204736174698; // t(0.975, 1): G - 1 degrees of freedom, not n - 1
        assertThat(f.clustered()).isTrue();
        assertThat(f.clusters()).isEqualTo(2);
        assertThat(f.loglikelihoodStandardError()).isCloseTo(se, within(1e-12));
        assertThat(f.ciLow()).isCloseTo(Math.exp(-(m + t * se)), within(1e-6));
        assertThat(f.ciHigh()).isCloseTo(Math.exp(-(m - t * se)), within(1e-4));
        assertThat(f.format()).contains("n=4, 2 clusters");
    }

    @Test
    void oneAnswerHasAPerplexityButNoIntervalAndNoneHasNeither() {
        Perplexity.Figure one = Perplexity.of(List.of(new Sample("0", -0.5)));
        assertThat(one.perplexity()).isCloseTo(Math.exp(0.5), within(1e-12));
        assertThat(one.hasInterval()).isFalse();
        assertThat(one.hasStandardError()).isFalse();
        assertThat(one.format()).isEqualTo("1.649 (mean ll -0.5000, n=1)");
        assertThat(Perplexity.of(List.of())).isSameAs(Perplexity.Figure.EMPTY);
        assertThat(Perplexity.Figure.EMPTY.format()).isEqualTo("no log-likelihoods");
    }
}
