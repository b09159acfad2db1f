package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** pass@k by Chen et al.'s unbiased estimator, checked against 1 - C(n - c, k) / C(n, k) computed directly. */
class PassAtKTest {
    @Test
    void oneProblemsPassAtKIsOneMinusTheChanceThatKDrawsWithoutReplacementAllFail() {
        for (int n = 1; n <= 12; n++) {
            for (int c = 0; c <= n; c++) {
                for (int k = 1; k <= n; k++) {
                    double expected = 1 - binomial(n - c, k) / binomial(n, k);
                    assertThat(PassAtK.of(n, c, k)).as("n=%d c=%d k=%d", n, c, k).isCloseTo(expected, within(1e-12));
                }
            }
        }
        assertThat(PassAtK.of(5, 1, 1)).isCloseTo(0.2, within(1e-12));
        assertThat(PassAtK.of(5, 1, 5)).isEqualTo(1.0);
        assertThat(PassAtK.of(10, 3, 2)).isCloseTo(1 - 21.0 / 45, within(1e-12));
    }

    @Test
    void theMeanOverProblemsHasAWilsonIntervalOverTheProblems() {
        Estimate e = PassAtK.over(List.of(new int[] {5, 5}, new int[] {5, 0}, new int[] {5, 1}, new int[] {5, 4}), 1);
        assertThat(e.mean()).isCloseTo((1 + 0 + 0.2 + 0.8) / 4, within(1e-12));
        assertThat(e.n()).isEqualTo(4);
        double[] wilson = Wilson.interval(0.5, 4, 1.959963984540054);
        assertThat(e.ciLow()).isEqualTo(wilson[0]);
        assertThat(e.ciHigh()).isEqualTo(wilson[1]);
        // Problems with fewer answers than k are left out.
        assertThat(PassAtK.over(List.of(new int[] {3, 1}, new int[] {5, 1}), 5).n()).isEqualTo(1);
        assertThat(PassAtK.over(List.of(new int[] {3, 1}), 5).n()).isZero();
    }

    @Test
    void impossibleCountsAreRefused() {
        assertThatThrownBy(() -> PassAtK.of(5, 6, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.of(5, 1, 6)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.of(5, 1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static double binomial(int n, int k) {
        if (k > n) {
            return 0;
        }
        double r = 1;
        for (int i = 1; i <= k; i++) {
            r = r * (n - k + i) / i;
        }
        return r;
    }
}
