package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScorersTest {
    @Test
    void everySpecRoundTripsThroughParse() {
        for (String spec : List.of("exact", "normalized", "includes", "choice", "numeric", "numeric:0.01",
                "numeric:5%", "numeric:1e-3", "regex:answer is (\\w+)")) {
            Scorer scorer = Scorers.parse(spec);
            assertThat(scorer.spec()).isEqualTo(spec);
            assertThat(Scorers.parse(scorer.spec()).spec()).isEqualTo(spec);
        }
    }

    @Test
    void namesListsEveryScorerIncludingTheJudge() {
        assertThat(Scorers.names()).containsExactly("exact", "normalized", "includes", "regex", "numeric", "choice",
                "exact_match", "acc", "acc_norm", "acc_bytes", "judge");
    }

    @Test
    void anUnknownSpecIsNamedAndTheValidFormsListed() {
        assertThatThrownBy(() -> Scorers.parse("fuzzy"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad scorer spec 'fuzzy': unknown scorer; valid forms: exact, normalized, includes,"
                        + " regex:PATTERN (with a capturing group), numeric, numeric:TOL, numeric:TOL% (TOL absolute,"
                        + " or relative with %), choice, exact_match:{JSON} (lm-eval's exact_match with its options"
                        + " and regex filter, from task files), and for multiple-choice vignettes asked by log-likelihood acc, acc_norm"
                        + " and acc_bytes; judge and judge:MODEL are model-graded and handled by JudgeRubric");
        assertThatThrownBy(() -> Scorers.parse("Exact")).hasMessageStartingWith("bad scorer spec 'Exact': unknown scorer;");
        assertThatThrownBy(() -> Scorers.parse(null)).hasMessageStartingWith("scorer spec is null; valid forms:");
    }

    @Test
    void scorersWithoutArgumentsRejectOne() {
        assertThatThrownBy(() -> Scorers.parse("exact:x"))
                .hasMessageStartingWith("bad scorer spec 'exact:x': exact takes no argument after a colon;");
    }

    @Test
    void aToleranceMustBeANonNegativeDecimal() {
        for (String spec : List.of("numeric:", "numeric:abc", "numeric:-1", "numeric:NaN", "numeric:%", "numeric:1e999")) {
            assertThatThrownBy(() -> Scorers.parse(spec))
                    .as(spec)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("bad scorer spec '" + spec + "': tolerance '")
                    .hasMessageContaining("is not a non-negative decimal such as 0.01, 1e-3 or 5%");
        }
    }

    @Test
    void judgeSpecsAreRecognisedButNotParsedIntoScorers() {
        assertThat(Scorers.isJudge("judge")).isTrue();
        assertThat(Scorers.isJudge("judge:gpt-4o-mini")).isTrue();
        assertThat(Scorers.isJudge("judge:")).isFalse();
        assertThat(Scorers.isJudge("exact")).isFalse();
        assertThat(Scorers.isJudge(null)).isFalse();
        assertThatThrownBy(() -> Scorers.parse("judge"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bad scorer spec 'judge': judge is model-graded: it needs a model call,"
                        + " so it is not a Scorer; grade it with JudgeRubric");
        assertThatThrownBy(() -> Scorers.parse("judge:llama3")).hasMessageContaining("handled by JudgeRubric");
        assertThatThrownBy(() -> Scorers.parse("judge:"))
                .hasMessageStartingWith("bad scorer spec 'judge:': judge:MODEL needs a model name after the colon");
    }

    @Test
    void scorersRejectNullArguments() {
        for (String spec : List.of("exact", "normalized", "includes", "choice", "numeric", "regex:(x)")) {
            Scorer scorer = Scorers.parse(spec);
            assertThatThrownBy(() -> scorer.score(null, "x")).as(spec).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> scorer.score("x", null)).as(spec).isInstanceOf(NullPointerException.class);
        }
    }
}
