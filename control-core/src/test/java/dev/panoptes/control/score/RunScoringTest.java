package dev.panoptes.control.score;

import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ScoreEntry;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RunScoringTest {
    private final RunScoring normalized = new RunScoring("normalized");

    private static Vignette vignette(String expected, String scorer) {
        return new Vignette("v1", "question?", expected, Map.of(), List.of(), scorer);
    }

    private static ResponseRecord answer(String text) {
        return new ResponseRecord("v1", text);
    }

    @Test
    void aVignetteWithoutAnExpectedAnswerIsNotScored() {
        assertThat(normalized.score(vignette(null, null), answer("anything"))).isNull();
        assertThat(normalized.score(vignette("", null), answer("anything"))).isNull();
        assertThat(normalized.score(vignette("", "numeric"), answer("4"))).isNull();
        assertThat(normalized.score(vignette(null, "judge:gpt-4o"), answer("4"))).isNull();
        assertThat(normalized.score("exact", null, "x")).isNull();
        assertThat(normalized.score("exact", "", "x")).isNull();
    }

    @Test
    void theRunsScorerScoresVignettesWithoutTheirOwn() {
        assertThat(normalized.score(vignette("Paris", null), answer("The Paris!")))
                .isEqualTo(new ScoreEntry("normalized", 1.0, null));
        ScoreEntry wrong = normalized.score(vignette("Paris", null), answer("Lyon"));
        assertThat(wrong.scorer()).isEqualTo("normalized");
        assertThat(wrong.score()).isEqualTo(0.0);
        assertThat(wrong.explanation()).contains("lyon");
    }

    @Test
    void aVignettesOwnScorerOverridesTheRuns() {
        Vignette numeric = vignette("4", "numeric:0.1");
        assertThat(normalized.specFor(numeric)).isEqualTo("numeric:0.1");
        assertThat(normalized.specFor(vignette("4", null))).isEqualTo("normalized");

        ScoreEntry entry = normalized.score(numeric, answer("about 4.05"));
        assertThat(entry.scorer()).isEqualTo("numeric:0.1");
        assertThat(entry.score()).isEqualTo(1.0);
        assertThat(entry.explanation()).contains("read 4.05");
    }

    @Test
    void aJudgeSpecGivesAnEntryWaitingForItsGrade() {
        assertThat(new RunScoring("judge:gpt-4o").score(vignette("Paris", null), answer("Paris")))
                .isEqualTo(new ScoreEntry("judge:gpt-4o", null, null));
        assertThat(normalized.score(vignette("Paris", "judge"), answer("Paris")))
                .isEqualTo(new ScoreEntry("judge", null, null));
    }

    @Test
    void aVignetteScorerThatDoesNotParseLeavesTheAnswerUnscoredAndSaysWhy() {
        ScoreEntry entry = normalized.score(vignette("4", "numeric:lots"), answer("4"));

        assertThat(entry.scorer()).isEqualTo("numeric:lots");
        assertThat(entry.score()).isNull();
        assertThat(entry.explanation()).startsWith("not scored:").contains("bad scorer spec 'numeric:lots'");
        // Asked again, it says so again (a bad spec is not cached as a scorer).
        assertThat(normalized.score(vignette("4", "numeric:lots"), answer("4"))).isEqualTo(entry);
        assertThat(normalized.score(vignette("4", "nonsense"), answer("4")).explanation()).startsWith("not scored:");
    }

    @Test
    void aMissingAnswerTextIsScoredAsEmpty() {
        assertThat(normalized.score("exact", "4", null)).satisfies(e -> assertThat(e.score()).isEqualTo(0.0));
    }

    @Test
    void checkAcceptsScorersAndJudgeSpecsAndNamesWhatIsWrongOtherwise() {
        assertThat(RunScoring.check("exact")).isEqualTo("exact");
        assertThat(RunScoring.check("regex:answer is (\\d+)")).isEqualTo("regex:answer is (\\d+)");
        assertThat(RunScoring.check("judge")).isEqualTo("judge");
        assertThat(RunScoring.check("judge:gpt-4o")).isEqualTo("judge:gpt-4o");

        assertThatThrownBy(() -> RunScoring.check(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no scorer given; use one of exact, normalized");
        assertThatThrownBy(() -> RunScoring.check("  "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no scorer given");
        assertThatThrownBy(() -> RunScoring.check("bogus"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad scorer spec 'bogus'");
        assertThatThrownBy(() -> RunScoring.check("judge:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a model name");
        assertThatThrownBy(() -> RunScoring.check("regex:no group"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad scorer spec 'regex:no group'");
        assertThatThrownBy(() -> new RunScoring("numeric:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad scorer spec 'numeric:x'");
    }

    @Test
    void theRunKeepsItsSpec() {
        assertThat(normalized.defaultSpec()).isEqualTo("normalized");
        assertThat(normalized).hasToString("RunScoring[normalized]");
    }

    @Test
    void theJudgeModelIsWhatFollowsTheColonOfAJudgeSpec() {
        assertThat(RunScoring.judgeModel("judge:gpt-4o")).isEqualTo("gpt-4o");
        assertThat(RunScoring.judgeModel("judge:meta-llama/Llama-3.1-70B")).isEqualTo("meta-llama/Llama-3.1-70B");
        assertThat(RunScoring.judgeModel("judge")).isNull();

        assertThat(RunScoring.judgeModelOf("judge:gpt-4o")).isEqualTo("gpt-4o");
        assertThat(RunScoring.judgeModelOf("judge")).isNull();
        assertThat(RunScoring.judgeModelOf("judge:")).isNull();
        assertThat(RunScoring.judgeModelOf("numeric:0.1")).isNull();
        assertThat(RunScoring.judgeModelOf(null)).isNull();
    }
}
