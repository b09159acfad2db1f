package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PairedDifferenceTest {
    @Test
    void isThePairedTTestOverVignettes() {
        // d = 0, 0.5, 0.5: mean 1/3, sd = sqrt(((1/3)^2 + 2 (1/6)^2) / 2) = sqrt(1/12), SE = sqrt(1/12) / sqrt(3) = 1/6.
        // t = 2 with 2 df: p = 1 - 2 / sqrt(6) ... = 0.18350; t(0.975, 2) = 4.30265, half width 0.71711.
        PairedDifference d = PairedDifference.of(List.of(0.0, 0.5, 0.5));

        assertThat(d.vignettes()).isEqualTo(3);
        assertThat(d.difference()).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(d.standardError()).isCloseTo(1.0 / 6, within(1e-12));
        assertThat(d.ciLow()).isCloseTo(1.0 / 3 - 4.302652729749464 / 6, within(1e-9));
        assertThat(d.ciHigh()).isEqualTo(1.0);
        // Two-sided p of t = 2 at 2 df is 1 - 2 / sqrt(6) = 0.18350 (closed form for df = 2: 1 - t / sqrt(2 + t^2)).
        assertThat(d.pValue()).isCloseTo(1 - 2 / Math.sqrt(6), within(1e-10));
        // The upper end, 1.050, is clipped to 1: no difference of two scores in [0, 1] is larger.
        assertThat(d.format()).isEqualTo("+0.333, 95% CI -0.384 to +1.000, SE 0.167, p=0.184, 3 vignettes");
    }

    @Test
    void theMeanOverGroupsCountsEachGroupOnceWithSatterthwaiteDegreesOfFreedom() {
        // A: d = 0, 0.5, 0.5 (mean 1/3, SE 1/6, V 3); B: d = 1, 0 (mean 1/2, SE 1/2, V 2).
        PairedDifference a = PairedDifference.of(List.of(0.0, 0.5, 0.5));
        PairedDifference b = PairedDifference.of(List.of(1.0, 0.0));
        PairedDifference mean = PairedDifference.meanOf(List.of(a, b, PairedDifference.of(List.of())));

        // Mean 5/12 (not the pooled 2/5), SE sqrt(1/36 + 1/4) / 2 = sqrt(10) / 12;
        // df = (10/36)^2 / ((1/36)^2 / 2 + (1/4)^2 / 1) = 1.22700.
        assertThat(mean.vignettes()).isEqualTo(5);
        assertThat(mean.difference()).isCloseTo(5.0 / 12, within(1e-12));
        assertThat(mean.standardError()).isCloseTo(Math.sqrt(10) / 12, within(1e-12));
        double df = (10.0 / 36) * (10.0 / 36) / (1.0 / 36 / 36 / 2 + 1.0 / 16);
        assertThat(df).isCloseTo(1.22700, within(1e-5));
        assertThat(mean.ciLow()).isCloseTo(Math.max(-1, 5.0 / 12 - StudentT.quantile(0.975, df) * Math.sqrt(10) / 12),
                within(1e-12));
        assertThat(mean.ciHigh()).isEqualTo(1.0);
        assertThat(mean.pValue()).isCloseTo(StudentT.twoSidedP(5.0 / 12 / (Math.sqrt(10) / 12), df), within(1e-12));

        // One group is its own paired t; a group of one vignette leaves the mean without interval.
        assertThat(PairedDifference.meanOf(List.of(a))).isEqualTo(a);
        PairedDifference noSpread = PairedDifference.meanOf(List.of(a, PairedDifference.of(List.of(1.0))));
        assertThat(noSpread.difference()).isCloseTo((1.0 / 3 + 1) / 2, within(1e-12));
        assertThat(noSpread.hasInterval()).isFalse();
        assertThat(PairedDifference.meanOf(List.of(PairedDifference.of(List.of(0.0, 0.0)),
                PairedDifference.of(List.of(1.0, 1.0)))).pValue()).isZero();
        assertThat(PairedDifference.meanOf(List.of()).format()).isEqualTo("no shared vignettes");
    }

    @Test
    void noSpreadAndTooFewVignettesAreSaidPlainly() {
        PairedDifference same = PairedDifference.of(List.of(0.0, 0.0, 0.0));
        assertThat(same.standardError()).isZero();
        assertThat(same.pValue()).isEqualTo(1.0);
        assertThat(same.ciLow()).isZero();
        PairedDifference allUp = PairedDifference.of(List.of(1.0, 1.0));
        assertThat(allUp.pValue()).isZero();
        PairedDifference one = PairedDifference.of(List.of(0.5));
        assertThat(one.hasInterval()).isFalse();
        assertThat(one.format()).isEqualTo("+0.500 (1 vignette, no interval)");
        assertThat(PairedDifference.of(List.of()).format()).isEqualTo("no shared vignettes");
        assertThat(PairedDifference.p(0.0004)).isEqualTo("<0.001");
        // 0, 1, 1, 1, ... 1 over 40 vignettes: t far out, and "p<0.001", never "p=<0.001".
        java.util.List<Double> many = new java.util.ArrayList<>(java.util.Collections.nCopies(39, 1.0));
        many.add(0.0);
        assertThat(PairedDifference.of(many).format()).contains(", p<0.001, 40 vignettes");
    }
}
