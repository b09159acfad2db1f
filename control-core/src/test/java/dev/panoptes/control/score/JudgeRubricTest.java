package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JudgeRubricTest {
    @Test
    void buildsASystemAndAUserMessageAskingForJsonOnly() {
        List<Map<String, String>> messages = JudgeRubric.messages(null, "Capital of France?", "Paris, I think", "Paris");

        assertThat(messages).hasSize(2);
        assertThat(messages.get(0)).containsOnlyKeys("role", "content").containsEntry("role", "system");
        assertThat(messages.get(0).keySet()).containsExactly("role", "content");
        assertThat(messages.get(0).get("content"))
                .contains(JudgeRubric.DEFAULT_RUBRIC)
                .contains("Reply with ONLY a JSON object")
                .contains("{\"score\": <a number from 0 to 1>, \"explanation\": \"<one sentence>\"}");
        assertThat(messages.get(1)).containsEntry("role", "user");
        assertThat(messages.get(1).get("content"))
                .contains("<question>\nCapital of France?\n</question>")
                .contains("<expected_answer>\nParis\n</expected_answer>")
                .contains("<answer>\nParis, I think\n</answer>");
    }

    @Test
    void aGivenRubricReplacesTheDefault() {
        String system = JudgeRubric.messages("Grade politeness only.", "q", "a", "e").get(0).get("content");
        assertThat(system).contains("Grade politeness only.").doesNotContain(JudgeRubric.DEFAULT_RUBRIC);
    }

    @Test
    void readsPlainJson() {
        assertThat(JudgeRubric.parseVerdict("{\"score\": 0.5, \"explanation\": \"Half the steps are right.\"}"))
                .isEqualTo(new Score(0.5, "Half the steps are right."));
        assertThat(JudgeRubric.parseVerdict("{\"score\": 1}")).isEqualTo(new Score(1, null));
    }

    @Test
    void readsJsonInsideACodeFence() {
        assertThat(JudgeRubric.parseVerdict("```json\n{\"score\": 1, \"explanation\": \"Matches.\"}\n```"))
                .isEqualTo(new Score(1, "Matches."));
    }

    @Test
    void readsTheFirstScoredObjectInProse() {
        String reply = "Let me think. The answer {mostly} matches.\nVerdict: {\"score\": 0.75, \"explanation\": \"Close.\"}"
                + " Hope that helps {\"score\": 0}";
        assertThat(JudgeRubric.parseVerdict(reply)).isEqualTo(new Score(0.75, "Close."));
    }

    @Test
    void readsScoresGivenAsStringsBooleansOrWords() {
        assertThat(JudgeRubric.parseVerdict("{\"score\": \"0.25\"}").value()).isEqualTo(0.25);
        assertThat(JudgeRubric.parseVerdict("{\"score\": true}").value()).isEqualTo(1);
        assertThat(JudgeRubric.parseVerdict("{\"score\": false}").value()).isEqualTo(0);
        assertThat(JudgeRubric.parseVerdict("{\"score\": \"correct\", \"explanation\": \"Right.\"}"))
                .isEqualTo(new Score(1, "Right."));
        assertThat(JudgeRubric.parseVerdict("{\"score\": \"Incorrect\"}").value()).isEqualTo(0);
        assertThat(JudgeRubric.parseVerdict("{'score': 1, explanation: 'ok',}")).isEqualTo(new Score(1, "ok"));
    }

    @Test
    void malformedJsonThrowsAndQuotesTheReply() {
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{score: }"))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessageStartingWith("the judge reply holds no valid JSON object (")
                .hasMessageEndingWith("); reply: \"{score: }\"");
    }

    @Test
    void aMissingScoreThrows() {
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{\"explanation\": \"Looks right.\"}"))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessage("the judge reply has no \"score\" field in {\"explanation\":\"Looks right.\"};"
                        + " reply: \"{\"explanation\": \"Looks right.\"}\"");
    }

    @Test
    void aScoreOutsideZeroToOneIsNotRescaled() {
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{\"score\": 7, \"explanation\": \"Good.\"}"))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessage("the judge gave score 7, outside [0, 1] (scores on other scales are not guessed);"
                        + " reply: \"{\"score\": 7, \"explanation\": \"Good.\"}\"");
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{\"score\": \"-0.5\"}"))
                .hasMessageStartingWith("the judge gave score \"-0.5\", outside [0, 1]");
    }

    @Test
    void anUninterpretableScoreThrows() {
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{\"score\": \"mostly\"}"))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessage("the judge gave score \"mostly\", which is not a number, a boolean, or"
                        + " \"correct\"/\"incorrect\"; reply: \"{\"score\": \"mostly\"}\"");
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("{\"score\": null}"))
                .hasMessageStartingWith("the judge gave score null, which is not a number");
    }

    @Test
    void anEmptyReplyThrows() {
        assertThatThrownBy(() -> JudgeRubric.parseVerdict(""))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessage("the judge reply is empty; expected a JSON object like {\"score\": 1}");
        assertThatThrownBy(() -> JudgeRubric.parseVerdict("  \n")).isInstanceOf(JudgeVerdictException.class);
        assertThatThrownBy(() -> JudgeRubric.parseVerdict(null)).isInstanceOf(JudgeVerdictException.class);
    }

    @Test
    void aReplyWithoutAnyObjectThrowsQuotingOnlyItsFirst200Characters() {
        String reply = "correct " + "x".repeat(300);
        assertThatThrownBy(() -> JudgeRubric.parseVerdict(reply))
                .isInstanceOf(JudgeVerdictException.class)
                .hasMessage("the judge reply holds no JSON object; reply: \"correct " + "x".repeat(192)
                        + "... (108 more characters)\"");
    }
}
