package dev.panoptes.control.score;

import dev.panoptes.control.Choices;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** acc, acc_norm and acc_bytes as lm-eval computes them, from the stored answer alone. */
class LoglikelihoodScorerTest {
    @Test
    void accPicksTheHighestLoglikelihoodAccNormTheHighestPerCharacterAccBytesPerByte() {
        // "é" is one character and two bytes; the long choice loses in total but wins per character.
        Choices choices = new Choices(List.of("no", "a very long answer", "éé"));
        String answer = ChoiceLoglikelihoods.of(choices, List.of(-2.0, -3.6, -2.2), List.of(true, false, false))
                .toJson();

        assertThat(answer).startsWith("{\"resps\":[[-2.0,true],[-3.6,false],[-2.2,false]],\"chars\":[2,18,2]")
                .contains("\"bytes\":[2,18,4]").contains("\"chosen\":0")
                .endsWith("\"continuations\":[\" no\",\" a very long answer\",\" éé\"]}");
        assertThat(ChoiceLoglikelihoods.parse(answer).continuations()).as("read back")
                .containsExactly(" no", " a very long answer", " éé");
        assertThat(Scorers.parse("acc").score(answer, "0").value()).isEqualTo(1.0);
        assertThat(Scorers.parse("acc_norm").score(answer, "0").value()).isZero();
        assertThat(Scorers.parse("acc_norm").score(answer, "1").value()).isEqualTo(1.0);
        // Per byte: -1.0, -0.2, -0.55: the long one again.
        assertThat(Scorers.parse("acc_bytes").score(answer, "1").value()).isEqualTo(1.0);
    }

    @Test
    void anAnswerParsedOnceScoresEachMetricAsItsJsonDoes() {
        Choices choices = new Choices(List.of("no", "a very long answer", "éé"));
        ChoiceLoglikelihoods parsed = ChoiceLoglikelihoods.of(choices, List.of(-2.0, -3.6, -2.2),
                List.of(true, false, false));
        for (String metric : Scorers.loglikelihoodNames()) {
            for (String expected : List.of("0", "1", "2", "7")) {
                assertThat(Scorers.loglikelihoodScore(metric, parsed, expected))
                        .as("%s against %s", metric, expected)
                        .isEqualTo(Scorers.parse(metric).score(parsed.toJson(), expected));
            }
        }
        assertThatThrownBy(() -> Scorers.loglikelihoodScore("exact", parsed, "0"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exact is not one of");
    }

    @Test
    void anAnswerStoredWithoutContinuationsStillReadsAndScores() {
        String before = "{\"resps\":[[-1.0,true],[-2.0,false]],\"chars\":[1,1],\"bytes\":[1,1],\"chosen\":0}";
        assertThat(ChoiceLoglikelihoods.parse(before).continuations()).isEmpty();
        assertThat(Scorers.parse("acc").score(before, "0").value()).isEqualTo(1.0);
    }

    @Test
    void aTextAnswerOrABadExpectedIndexScoresZeroSayingWhy() {
        Score text = Scorers.parse("acc").score("Paris", "0");
        assertThat(text.value()).isZero();
        assertThat(text.explanation()).contains("not the JSON of log-likelihoods");
        String answer = ChoiceLoglikelihoods.of(new Choices(List.of("a", "b")), List.of(-1.0, -2.0),
                List.of(true, false)).toJson();
        assertThat(Scorers.parse("acc").score(answer, "5").explanation()).contains("is not the index");
    }

    @Test
    void aMultipleChoiceVignetteIsScoredAccWhateverTheRunsTextScorer() {
        dev.panoptes.control.Vignette v = dev.panoptes.control.Vignette.multipleChoice("q", "Q:",
                new Choices(List.of("a", "b")), 1, java.util.Map.of());
        assertThat(new RunScoring("exact").specFor(v)).isEqualTo("acc");
        assertThat(new RunScoring("acc_norm").specFor(v)).isEqualTo("acc_norm");
    }

    @Test
    void aOneChoiceVignetteIsLmEvalsLoglikelihoodRequestItsAccWhetherTheContinuationIsGreedy() {
        Choices continuation = new Choices(List.of(" tea"), "");
        ChoiceLoglikelihoods greedy = ChoiceLoglikelihoods.of(continuation, List.of(-0.5), List.of(true));
        ChoiceLoglikelihoods notGreedy = ChoiceLoglikelihoods.of(continuation, List.of(-0.1), List.of(false));
        assertThat(greedy.isContinuation()).isTrue();
        assertThat(greedy.toJson()).isEqualTo("{\"resps\":[[-0.5,true]],\"chars\":[4],\"bytes\":[4],\"chosen\":0,"
                + "\"continuations\":[\" tea\"]}");

        // Argmax over one choice would always be right; lm-eval's acc for loglikelihood is is_greedy.
        assertThat(Scorers.parse("acc").score(greedy.toJson(), "0").value()).isEqualTo(1.0);
        Score miss = Scorers.parse("acc").score(notGreedy.toJson(), "0");
        assertThat(miss.value()).isZero();
        assertThat(miss.explanation()).contains("not greedy");
        Score norm = Scorers.parse("acc_norm").score(greedy.toJson(), "0");
        assertThat(norm.value()).isZero();
        assertThat(norm.explanation()).contains("acc_norm compares choices").contains("score it acc");
    }
}
