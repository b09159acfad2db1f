package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NumericScorerTest {
    private final Scorer numeric = Scorers.parse("numeric");

    @Test
    void readsCurrencyAndThousandsSeparators() {
        assertThat(numeric.score("The total is $1,234.50.", "1234.5")).isEqualTo(new Score(1, "read 1234.5"));
        assertThat(numeric.score("1,234,567.5", "1234567.5").value()).isEqualTo(1);
        assertThat(numeric.score("It costs \u20ac 12", "12").value()).isEqualTo(1);
    }

    @Test
    void ignoresUnitsAndPercentSigns() {
        assertThat(numeric.score("about 12 km", "12")).isEqualTo(new Score(1, "read 12"));
        assertThat(numeric.score("45%", "45")).isEqualTo(new Score(1, "read 45"));
        assertThat(numeric.score("The rate is 45%.", "45%").value()).isEqualTo(1);
    }

    @Test
    void readsSignsDecimalsExponentsAndFractions() {
        assertThat(numeric.score("-3", "-3")).isEqualTo(new Score(1, "read -3"));
        assertThat(numeric.score("The answer is \u22123.", "-3").value()).isEqualTo(1);
        assertThat(numeric.score("It fell by -$5", "-5").value()).isEqualTo(1);
        assertThat(numeric.score("3", "-3")).isEqualTo(new Score(0, "read 3, expected -3 within 1e-6"));
        assertThat(numeric.score("3.0", "3").value()).isEqualTo(1);
        assertThat(numeric.score("1e3", "1000")).isEqualTo(new Score(1, "read 1000"));
        assertThat(numeric.score("about 2.5E-3 grams", "0.0025").value()).isEqualTo(1);
        assertThat(numeric.score("3/4 of the cake", "0.75")).isEqualTo(new Score(1, "read 0.75"));
    }

    @Test
    void theLastNumberWinsBecauseModelsShowTheirWorkFirst() {
        assertThat(numeric.score("2 apples plus 3 apples is 5", "5")).isEqualTo(new Score(1, "read 5"));
        assertThat(numeric.score("5 apples, or rather 2 apples plus 3 apples", "5"))
                .isEqualTo(new Score(0, "read 3, expected 5 within 1e-6"));
    }

    @Test
    void doesNotReadDigitsInsideWordsOrHyphensAsSigns() {
        assertThat(numeric.score("Water is H2O", "2")).isEqualTo(new Score(0, "no number in the answer"));
        assertThat(numeric.score("COVID-19", "19")).isEqualTo(new Score(1, "read 19"));
        assertThat(numeric.score("5-3", "3").value()).isEqualTo(1);
    }

    @Test
    void absoluteToleranceAllowsThatMuchDifference() {
        Scorer loose = Scorers.parse("numeric:0.01");
        assertThat(loose.score("3.14159", "3.14").value()).isEqualTo(1);
        assertThat(loose.score("3.16", "3.14")).isEqualTo(new Score(0, "read 3.16, expected 3.14 within 0.01"));
        assertThat(numeric.score("3.14159", "3.14").value()).isEqualTo(0);
    }

    @Test
    void relativeToleranceScalesWithTheExpectedValue() {
        Scorer onePercent = Scorers.parse("numeric:1%");
        assertThat(onePercent.score("1009", "1000").value()).isEqualTo(1);
        assertThat(onePercent.score("1011", "1000")).isEqualTo(new Score(0, "read 1011, expected 1000 within 1%"));
        assertThat(onePercent.score("-0.995", "-1").value()).isEqualTo(1);
        assertThat(onePercent.score("0.001", "0").value()).isEqualTo(0);
    }

    @Test
    void anAnswerWithoutANumberScoresZero() {
        assertThat(numeric.score("I don't know", "42")).isEqualTo(new Score(0, "no number in the answer"));
        assertThat(numeric.score("", "42")).isEqualTo(new Score(0, "no number in the answer"));
    }

    @Test
    void anExpectedAnswerWithoutANumberScoresZeroInsteadOfThrowing() {
        assertThat(numeric.score("42", "forty-two"))
                .isEqualTo(new Score(0, "expected answer 'forty-two' holds no number"));
    }
}
