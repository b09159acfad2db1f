package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NormalizationTest {
    private final Scorer exact = Scorers.parse("exact");
    private final Scorer normalized = Scorers.parse("normalized");
    private final Scorer includes = Scorers.parse("includes");

    @Test
    void squadNormalizationLowerCasesDropsPunctuationArticlesAndExtraSpace() {
        assertThat(Normalization.squadNormalize("The Beatles!")).isEqualTo("beatles");
        assertThat(Normalization.squadNormalize("  An   apple,\tplease. ")).isEqualTo("apple please");
        assertThat(Normalization.squadNormalize("a theme and an anthem")).isEqualTo("theme and anthem");
        assertThat(Normalization.squadNormalize("Rock-'n'-roll: $5 + 3%")).isEqualTo("rocknroll 5 3");
        assertThat(Normalization.squadNormalize("\u201cParis\u201d \u2014 France\u3002")).isEqualTo("paris france");
        assertThat(Normalization.squadNormalize("The.")).isEmpty();
    }

    @Test
    void exactStripsSurroundingWhitespaceButKeepsCaseAndPunctuation() {
        assertThat(exact.score("  Paris\n", "Paris")).isEqualTo(Score.pass());
        assertThat(exact.score("paris", "Paris")).isEqualTo(Score.fail());
        assertThat(exact.score("Paris.", "Paris")).isEqualTo(Score.fail());
    }

    @Test
    void normalizedIgnoresCaseArticlesPunctuationAndWhitespace() {
        assertThat(normalized.score("The Beatles", "beatles").value()).isEqualTo(1);
        assertThat(normalized.score("an apple", "apple").value()).isEqualTo(1);
        assertThat(normalized.score("  New   York. ", "new york").value()).isEqualTo(1);
        assertThat(normalized.score("THE ANSWER!", "answer").value()).isEqualTo(1);
    }

    @Test
    void normalizedExplainsAMismatchWithBothNormalizedSides() {
        assertThat(normalized.score("The Rolling Stones", "The Beatles"))
                .isEqualTo(new Score(0, "normalized answer 'rolling stones' differs from normalized expected 'beatles'"));
    }

    @Test
    void includesFindsTheExpectedAnswerOnlyAsWholeWords() {
        assertThat(includes.score("It is New York.", "new york").value()).isEqualTo(1);
        assertThat(includes.score("The result is 4.", "4").value()).isEqualTo(1);
        assertThat(includes.score("The result is 14.", "4"))
                .isEqualTo(new Score(0, "'4' does not occur as whole words in the normalized answer"));
        assertThat(includes.score("York, New", "new york").value()).isEqualTo(0);
        assertThat(includes.score("the catalogue", "cat").value()).isEqualTo(0);
    }

    @Test
    void includesRefusesAnExpectedAnswerThatNormalizesToNothing() {
        assertThat(includes.score("anything at all", "The."))
                .isEqualTo(new Score(0, "expected answer 'The.' is empty after normalization"));
    }
}
