package dev.panoptes.control.stats;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class StudentTTest {
    @Test
    void quantilesMatchTheTables() {
        // t(0.975, df) from any table (R: qt(0.975, df)).
        assertThat(StudentT.quantile(0.975, 1)).isCloseTo(12.706204736174707, within(1e-9));
        assertThat(StudentT.quantile(0.975, 2)).isCloseTo(4.302652729749464, within(1e-9));
        assertThat(StudentT.quantile(0.975, 10)).isCloseTo(2.228138851986274, within(1e-9));
        assertThat(StudentT.quantile(0.975, 30)).isCloseTo(2.042272456301238, within(1e-9));
        assertThat(StudentT.quantile(0.975, 1e7)).isCloseTo(Accuracy.Z_95, within(1e-6));
    }

    @Test
    void twoSidedPValuesMatchKnownValues() {
        // df = 1 is the Cauchy distribution: P(|T| > 1) = 1/2 exactly.
        assertThat(StudentT.twoSidedP(1, 1)).isCloseTo(0.5, within(1e-12));
        // R: 2 * pt(-2, 5) = 0.1019394; 2 * pt(-2.228139, 10) = 0.05.
        assertThat(StudentT.twoSidedP(2, 5)).isCloseTo(0.10193947, within(1e-7));
        assertThat(StudentT.twoSidedP(-2, 5)).isCloseTo(0.10193947, within(1e-7));
        assertThat(StudentT.twoSidedP(2.228138851986274, 10)).isCloseTo(0.05, within(1e-10));
        assertThat(StudentT.twoSidedP(0, 7)).isEqualTo(1.0);
        assertThat(StudentT.twoSidedP(Double.POSITIVE_INFINITY, 7)).isZero();
    }
}
