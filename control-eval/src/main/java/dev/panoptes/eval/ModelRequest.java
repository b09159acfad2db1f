package dev.panoptes.eval;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;

import java.util.List;
import java.util.Objects;

/**
 * One chat to send, and the parameters to send it with.
 *
 * @param turns  the messages after the spec's system message; at least one, the last a user
 *               message's (a single prompt is one user turn)
 * @param params the spec's system message, temperature, max tokens, seed and model; never null
 * @param toolChat the tools offered and the loop's messages after the turns, or null for a plain chat
 */
public record ModelRequest(List<ChatMessage> turns, SpecParams params, ToolChat toolChat) {
    /** @throws IllegalArgumentException when there are no turns */
    public ModelRequest {
        turns = List.copyOf(Objects.requireNonNull(turns, "turns"));
        if (turns.isEmpty()) {
            throw new IllegalArgumentException("a model request needs at least one message");
        }
        params = params == null ? SpecParams.NONE : params;
    }

    /** A plain chat, with no tools. */
    public ModelRequest(List<ChatMessage> turns, SpecParams params) {
        this(turns, params, null);
    }

    /** A single user message. */
    public ModelRequest(String prompt, SpecParams params) {
        this(List.of(ChatMessage.user(Objects.requireNonNull(prompt, "prompt"))), params);
    }

    /** A vignette's prompt or chat, with a spec's parameters. */
    public static ModelRequest of(Vignette vignette, SpecParams params) {
        return new ModelRequest(vignette.turns(), params);
    }

    /** The last user message: the prompt itself for a single-prompt request. */
    public String prompt() {
        return turns.get(turns.size() - 1).content();
    }
}
