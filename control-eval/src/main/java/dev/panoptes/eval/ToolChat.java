package dev.panoptes.eval;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/**
 * The tool-using part of a chat request: the tools offered, and the messages of the loop so far
 * that follow the vignette's own turns (each assistant message as the server sent it, and one
 * {@code role: tool} message per call it made), in OpenAI's shape.
 *
 * @param tools    the names of the built-in tools offered ({@code bash}, {@code python}, {@code submit}); not empty
 * @param messages the loop's messages so far, as JSON objects; empty on the first turn
 */
public record ToolChat(List<String> tools, List<JsonNode> messages) {
    /** @throws IllegalArgumentException when no tool is offered */
    public ToolChat {
        tools = List.copyOf(Objects.requireNonNull(tools, "tools"));
        messages = List.copyOf(Objects.requireNonNull(messages, "messages"));
        if (tools.isEmpty()) {
            throw new IllegalArgumentException("a tool chat offers at least one tool");
        }
    }
}
