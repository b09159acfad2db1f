package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** lm-eval's exact_match and RegexFilter, as its Python computes them, through the scorer spec. */
class ExactMatchScorerTest {
    @Test
    void withoutOptionsItIsStringEquality() {
        Scorer s = Scorers.parse("exact_match:{}");
        assertThat(s.score("Paris", "Paris").value()).isEqualTo(1.0);
        assertThat(s.score("paris", "Paris").value()).isEqualTo(0.0);
        assertThat(s.score(" Paris", "Paris").value()).as("no stripping: lm-eval compares as is").isEqualTo(0.0);
    }

    @Test
    void ignoreCasePunctuationAndRegexesToIgnoreApplyToBothSides() {
        Scorer s = Scorers.parse("exact_match:{\"ignore_case\":true,\"ignore_punctuation\":true,"
                + "\"regexes_to_ignore\":[\",\",\"\\\\$\"]}");
        assertThat(s.score("$1,000.", "1000").value()).isEqualTo(1.0);
        assertThat(s.score("The End!", "the end").value()).isEqualTo(1.0);
        assertThat(s.score("the ends", "the end").value()).isEqualTo(0.0);
    }

    @Test
    void theRegexFilterTakesItsSelectedMatchStrippedOrTheFallback() {
        Scorer last = Scorers.parse("exact_match:{\"regex\":{\"regex_pattern\":\"(-?[0-9]+)\",\"group_select\":-1}}");
        assertThat(last.score("3 apples and then 7", "7").value()).isEqualTo(1.0);
        Scorer first = Scorers.parse("exact_match:{\"regex\":{\"regex_pattern\":\"answer: (\\\\w+|\\\\d+)\"}}");
        assertThat(first.score("answer: yes, answer: no", "yes").value()).isEqualTo(1.0);
        Scorer noGroup = Scorers.parse("exact_match:{\"regex\":{\"regex_pattern\":\"[0-9]+\",\"fallback\":\"none\"}}");
        assertThat(noGroup.score("it is 42", "42").value()).isEqualTo(1.0);
        assertThat(noGroup.score("no number", "none").value()).as("the fallback is what is compared").isEqualTo(1.0);
    }

    @Test
    void badOptionsAreRefusedWhenTheSpecIsParsed() {
        assertThatThrownBy(() -> Scorers.parse("exact_match:[1]")).hasMessageContaining("JSON object of options");
        assertThatThrownBy(() -> Scorers.parse("exact_match:{\"regexes_to_ignore\":[\"(\"]}"))
                .hasMessageContaining("does not compile");
    }
}
