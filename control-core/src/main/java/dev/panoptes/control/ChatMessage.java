package dev.panoptes.control;

import java.util.Set;

/**
 * One turn of a chat-format prompt, as OpenAI-compatible APIs take it.
 *
 * @param role    {@code system}, {@code user} or {@code assistant}
 * @param content the turn's text; may be empty, never null
 */
public record ChatMessage(String role, String content) {
    /** The roles a vignette's messages may use. */
    public static final Set<String> ROLES = Set.of("system", "user", "assistant");

    /** @throws IllegalArgumentException when the role is not one of {@link #ROLES} or content is null */
    public ChatMessage {
        Checks.notNull(role, "role of a chat message");
        if (!ROLES.contains(role)) {
            throw new IllegalArgumentException("a chat message's role must be system, user or assistant, got '"
                    + role + "'");
        }
        Checks.notNull(content, "content of a " + role + " message");
    }

    /** A user turn. */
    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    /** An assistant turn. */
    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }
}
