package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScoreTest {
    @Test
    void passAndFailAreOneAndZeroWithoutExplanation() {
        assertThat(Score.pass()).isEqualTo(new Score(1, null));
        assertThat(Score.fail()).isEqualTo(new Score(0, null));
        assertThat(Score.of(true)).isEqualTo(Score.pass());
        assertThat(Score.of(false)).isEqualTo(Score.fail());
    }

    @Test
    void partialCreditKeepsItsExplanation() {
        Score half = new Score(0.5, "half right");
        assertThat(half.value()).isEqualTo(0.5);
        assertThat(half.explanation()).isEqualTo("half right");
    }

    @Test
    void rejectsValuesOutsideZeroToOneAndNaN() {
        assertThatThrownBy(() -> new Score(1.5, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("score value must be between 0 and 1, got 1.5");
        assertThatThrownBy(() -> new Score(-0.1, null)).hasMessage("score value must be between 0 and 1, got -0.1");
        assertThatThrownBy(() -> new Score(Double.NaN, null)).hasMessage("score value must be between 0 and 1, got NaN");
    }
}
