package dev.panoptes.control.cost;

import dev.panoptes.control.Usage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MoneyTest {
    @Test
    void aCostIsItsDecimalWithoutTheDoublesNoise() {
        double cost = new Price(0.15, 0.60).cost(new Usage(10, 1));
        assertThat(Double.toString(cost)).as("the noise this class is for").isEqualTo("2.1000000000000002E-6");

        assertThat(Money.plain(cost)).isEqualTo("0.0000021");
        assertThat(Money.of(cost)).isEqualByComparingTo("0.0000021");
        assertThat(Money.plain(0.1 + 0.2)).isEqualTo("0.3");
        assertThat(Money.plain(7.5e-8)).as("never an exponent").isEqualTo("0.000000075");
        assertThat(Money.plain(100)).isEqualTo("100");
        assertThat(Money.plain(0)).isEqualTo("0");
        assertThat(Money.plain(-0.0)).isEqualTo("0");
        assertThat(Money.plain(1234567.891)).isEqualTo("1234567.891");
    }

    @Test
    void forPeopleFourDecimalsOrTwoSignificantDigitsWhenFourWouldShowNothing() {
        assertThat(Money.text(0.44)).isEqualTo("0.4400");
        assertThat(Money.text(20)).isEqualTo("20.0000");
        assertThat(Money.text(0)).isEqualTo("0.0000");
        assertThat(Money.text(0.00012345)).isEqualTo("0.0001");
        assertThat(Money.text(new Price(0.15, 0.60).cost(new Usage(10, 1)))).isEqualTo("0.0000021");
        assertThat(Money.text(6.3e-6)).isEqualTo("0.0000063");
        assertThat(Money.text(Double.NaN)).isEqualTo("n/a");
    }

    @Test
    void anAmountThatIsNoNumberIsRefused() {
        assertThatThrownBy(() -> Money.of(Double.POSITIVE_INFINITY)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("finite");
    }
}
