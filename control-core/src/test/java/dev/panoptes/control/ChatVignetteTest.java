package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChatVignetteTest {
    private static final ChatMessage SYSTEM = new ChatMessage("system", "be terse");
    private static final List<ChatMessage> SHOTS = List.of(ChatMessage.user("1+1?"), ChatMessage.assistant("2"));

    private static Vignette chat(String id, ChatMessage... messages) {
        return new Vignette(id, null, "4", Map.of("topic", "math"), List.of(messages), "numeric");
    }

    @Test
    void aChatVignetteEndingWithAUserMessageIsSentAsItsMessages() {
        Vignette v = chat("c1", SYSTEM, ChatMessage.user("2+2?"));

        assertThat(v.isChat()).isTrue();
        assertThat(v.prompt()).isNull();
        assertThat(v.turns()).containsExactly(SYSTEM, ChatMessage.user("2+2?"));
        assertThat(v.scorer()).isEqualTo("numeric");
    }

    @Test
    void aPromptVignetteIsSentAsOneUserTurn() {
        Vignette v = new Vignette("p1", "2+2?");

        assertThat(v.isChat()).isFalse();
        assertThat(v.messages()).isEmpty();
        assertThat(v.turns()).containsExactly(ChatMessage.user("2+2?"));
        assertThat(v.displayPrompt()).isEqualTo("2+2?");
    }

    @Test
    void theMessagesMustEndWithAUserMessage() {
        assertThatThrownBy(() -> chat("c1", ChatMessage.user("2+2?"), ChatMessage.assistant("4")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("vignette 'c1'")
                .hasMessageContaining("must end with a user message");
        assertThatThrownBy(() -> chat("c2", SYSTEM))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must end with a user message");
    }

    @Test
    void aVignetteGivesEitherAPromptOrMessagesNotBoth() {
        assertThatThrownBy(() -> new Vignette("c1", "2+2?", null, Map.of(), List.of(ChatMessage.user("2+2?")), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("vignette 'c1' gives both prompt and messages");
    }

    @Test
    void aPromptVignetteStillNeedsANonEmptyPrompt() {
        assertThatThrownBy(() -> new Vignette("p1", "", null, Map.of(), List.of(), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prompt of vignette 'p1' must not be empty");
        assertThatThrownBy(() -> new Vignette("p1", null, null, Map.of(), null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prompt of vignette 'p1' must not be empty");
    }

    @Test
    void neitherPromptNorMessagesIsAnIllegalArgumentAsDocumented() {
        assertThatThrownBy(() -> new Vignette("p1", null, null, Map.of(), List.of(), null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rolesAreSystemUserOrAssistantAndContentIsNeverNull() {
        assertThat(ChatMessage.ROLES).containsExactlyInAnyOrder("system", "user", "assistant");
        assertThatThrownBy(() -> new ChatMessage("tool", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("system, user or assistant")
                .hasMessageContaining("'tool'");
        assertThatThrownBy(() -> new ChatMessage("User", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ChatMessage(null, "x")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new ChatMessage("user", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("content of a user message");
        assertThat(ChatMessage.user("").content()).isEmpty();
    }

    @Test
    void theMessagesAreCopiedAndCannotBeChangedAfterwards() {
        List<ChatMessage> messages = new ArrayList<>(List.of(ChatMessage.user("hi")));
        Vignette v = new Vignette("c1", null, null, null, messages, null);
        messages.add(ChatMessage.assistant("later"));

        assertThat(v.messages()).containsExactly(ChatMessage.user("hi"));
        assertThatThrownBy(() -> v.messages().add(ChatMessage.user("x")))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aBlankScorerMeansTheRunsScorer() {
        assertThat(new Vignette("p1", "hi", null, Map.of(), List.of(), "  ").scorer()).isNull();
    }

    @Test
    void theDisplayPromptOfAChatIsOneRoleColonContentLinePerMessage() {
        Vignette v = chat("c1", SYSTEM, ChatMessage.user("2+2?"), ChatMessage.assistant("5"), ChatMessage.user("sure?"));
        assertThat(v.displayPrompt()).isEqualTo("system: be terse\nuser: 2+2?\nassistant: 5\nuser: sure?");
    }

    @Test
    void turnsBeforeAPromptVignetteMakeItAChatKeepingEverythingElse() {
        Vignette v = new Vignette("p1", "2+2?", "4", Map.of("topic", "math"), List.of(), "numeric");

        Vignette withShots = v.withTurnsBefore(SHOTS);

        assertThat(withShots.isChat()).isTrue();
        assertThat(withShots.prompt()).isNull();
        assertThat(withShots.messages()).containsExactly(SHOTS.get(0), SHOTS.get(1), ChatMessage.user("2+2?"));
        assertThat(withShots.id()).isEqualTo("p1");
        assertThat(withShots.expected()).isEqualTo("4");
        assertThat(withShots.metadata()).isEqualTo(Map.of("topic", "math"));
        assertThat(withShots.scorer()).isEqualTo("numeric");
        assertThat(withShots.displayPrompt()).isEqualTo("user: 1+1?\nassistant: 2\nuser: 2+2?");
    }

    @Test
    void turnsBeforeAChatGoAfterTheSystemMessagesItStartsWithAndBeforeTheRest() {
        Vignette v = chat("c1", SYSTEM, ChatMessage.user("2+2?"));
        assertThat(v.withTurnsBefore(SHOTS).messages())
                .containsExactly(SYSTEM, SHOTS.get(0), SHOTS.get(1), ChatMessage.user("2+2?"));
    }

    @Test
    void noTurnsBeforeLeavesTheVignetteAsItIs() {
        Vignette v = new Vignette("p1", "2+2?");
        assertThat(v.withTurnsBefore(List.of())).isSameAs(v);
    }
}
