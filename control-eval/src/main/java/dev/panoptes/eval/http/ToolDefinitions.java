package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;

/**
 * The {@code tools} of a chat request in OpenAI's function-calling shape, for the built-in tools:
 * {@code bash} and {@code python} take the code to run, {@code submit} the final answer; also kept
 * in a sample's transcript, as the tools the model was offered. Stateless.
 */
public final class ToolDefinitions {
    private ToolDefinitions() {
    }

    /**
     * The definitions of the named tools, in the order given.
     *
     * @throws IllegalArgumentException when a name is not a built-in tool's
     */
    public static ArrayNode of(ObjectMapper mapper, List<String> tools) {
        ArrayNode out = mapper.createArrayNode();
        for (String tool : tools) {
            switch (tool) {
                case "bash" -> add(out, "bash", "Run a bash command in your sandbox's work folder (no network) and"
                        + " see its output and exit status.", "cmd", "The bash command to run.");
                case "python" -> add(out, "python", "Run a Python 3 program in your sandbox's work folder (no"
                        + " network) and see what it prints. Use print() to see values.", "code",
                        "The Python code to run.");
                case "submit" -> add(out, "submit", "Submit your final answer; this ends the task.", "answer",
                        "The final answer.");
                default -> throw new IllegalArgumentException("no built-in tool is called '" + tool
                        + "'; the tools are bash, python and submit");
            }
        }
        return out;
    }

    private static void add(ArrayNode out, String name, String description, String parameter, String about) {
        ObjectNode function = out.addObject().put("type", "function").putObject("function");
        function.put("name", name).put("description", description);
        ObjectNode schema = function.putObject("parameters").put("type", "object");
        schema.putObject("properties").putObject(parameter).put("type", "string").put("description", about);
        schema.putArray("required").add(parameter);
        schema.put("additionalProperties", false);
    }
}
