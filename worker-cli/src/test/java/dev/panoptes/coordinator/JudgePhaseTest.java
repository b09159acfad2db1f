package dev.panoptes.coordinator;

import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether a run needs its judge phase: it reads every stored answer back, so a run that no judge
 * scores skips it, and a run one vignette of which names a judge does not.
 */
class JudgePhaseTest {
    private static Vignette vignette(String id, String scorer) {
        return new Vignette(id, "What is 1 + 1?", "2", Map.of(), null, scorer);
    }

    @Test
    void aRunScoredByAJudgeByDefaultIsGraded() {
        assertThat(JudgePhase.judges("judge:gpt-4o", List.of(vignette("a", null)))).isTrue();
    }

    @Test
    void oneVignetteThatNamesAJudgeIsEnoughToGrade() {
        assertThat(JudgePhase.judges("exact", List.of(vignette("a", null), vignette("b", "judge:gpt-4o"))))
                .isTrue();
    }

    @Test
    void aRunNoJudgeScoresSkipsTheJudgePhase() {
        assertThat(JudgePhase.judges("exact", List.of(vignette("a", null), vignette("b", "includes")))).isFalse();
    }
}
