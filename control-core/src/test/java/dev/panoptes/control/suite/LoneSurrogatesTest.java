package dev.panoptes.control.suite;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class LoneSurrogatesTest {
    @Test
    void aPromptAMessageAndAnExpectedAnswerAreEachNamedWithTheirLineAndPlace() {
        Vignette prompt = new Vignette("a", "What is \ud800?", "1", Map.of());
        Vignette message = new Vignette("b", null, null, Map.of(),
                List.of(new ChatMessage("system", "be terse"), ChatMessage.user("x\udc00")), null);
        Vignette expected = new Vignette("c", "fine", "\ud800", Map.of());
        Vignette pair = new Vignette("d", "a pair \ud83d\ude00 is fine", "ok", Map.of());

        List<String> problems = LoneSurrogates.problems(List.of(prompt, message, expected, pair), List.of(3, 5, 8, 9));

        assertThat(problems).hasSize(3);
        assertThat(problems.get(0)).startsWith("line 3: the prompt (\\ud800 at character 9) holds a lone UTF-16"
                + " surrogate");
        assertThat(problems.get(1)).startsWith("line 5: message 2 (\\udc00 at character 2) holds a lone");
        assertThat(problems.get(2)).startsWith("line 8: the expected answer (\\ud800 at character 1) holds a lone");
    }

    @Test
    void aVignetteOfOneMessageNamesItAsAMessage() {
        Vignette one = new Vignette("a", null, null, Map.of(), List.of(ChatMessage.user("\udc00")), null);

        assertThat(LoneSurrogates.problems(List.of(one), List.of())).singleElement().asString()
                .startsWith("line 1: message 1 (\\udc00 at character 1)");
    }
}
