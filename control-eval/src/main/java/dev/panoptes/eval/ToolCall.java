package dev.panoptes.eval;

import java.util.Objects;

/**
 * One entry of an assistant message's {@code tool_calls}, as the worker runs it.
 *
 * @param id        the call's id, which the tool message answering it repeats; the server's, or
 *                  one the client made when the server sent none (Ollama)
 * @param name      the function's name
 * @param arguments the arguments as JSON text; a server that sent them as an object rather than a
 *                  string (llama.cpp) has them written out as text here
 */
public record ToolCall(String id, String name, String arguments) {
    /** @throws NullPointerException when a field is missing */
    public ToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
