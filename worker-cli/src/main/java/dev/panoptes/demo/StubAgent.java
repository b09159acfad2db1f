package dev.panoptes.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How {@link StubModelServer} plays an agent and a coder, deterministically, so that the tool
 * loop and code scoring are tested end to end without a real model.
 *
 * <p><b>With tools</b> (a request with {@code tools}), it follows a script read from the task
 * (the last user message before the loop): each command in backticks in the task is run, in
 * order, one {@code bash} call per turn; a task without any that asks to compute an expression
 * ("Compute 17 * 23", "What is 2 ** 10?") calls {@code python} with {@code print(X)}, and for one
 * task in three (by the task, model and seed) first a wrong command ({@code print(X}, a syntax
 * error) that it then corrects. Once the script has run it answers with the last tool output, by
 * calling {@code submit} when that tool is offered, else as its message's text. A task with no
 * script is answered {@code "re: <task>"} without a tool call. For {@link StubModelServer#SMALL_MODEL}
 * it answers as some servers do: tool calls without ids (Ollama) and with arguments as a JSON object
 * rather than a string (llama.cpp).
 *
 * <p><b>Code problems</b> (a prompt asking for a Python function by name, as
 * {@code evals/code.jsonl} does): it answers the solutions it knows ({@code stub-solutions.json}
 * beside this class) in a fenced code block; three answers in ten (by prompt, model and seed) are
 * prose without code, which fails any test.
 *
 * <p>Stateless and thread-safe.
 */
final class StubAgent {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern BACKTICKS = Pattern.compile("`([^`]+)`");
    private static final Pattern COMPUTE = Pattern.compile("(?:[Cc]ompute|What is) ([-+*/%(). 0-9]+?)\\s*[?.]?\\s*$",
            Pattern.MULTILINE);
    private static final Pattern FUNCTION = Pattern.compile("Python function `([A-Za-z_][A-Za-z0-9_]*)");
    private static final byte[] TOOLS = "\"tools\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FUNCTION_BYTES = "Python function `".getBytes(StandardCharsets.US_ASCII);
    private static final Map<String, String> SOLUTIONS = solutions();

    private StubAgent() {
    }

    /** True when a chat request body holds a {@code tools} field (a cheap look before parsing). */
    static boolean offersTools(byte[] body) {
        return indexOf(body, TOOLS) >= 0;
    }

    /** True when a chat request body may ask for a Python function by name. */
    static boolean asksForCode(byte[] body) {
        return indexOf(body, FUNCTION_BYTES) >= 0;
    }

    /**
     * The answer to a request that offers tools or asks for code, or null when it is neither
     * (then the stub answers as it does any chat).
     */
    static StubAnswer answering(JsonNode body) {
        JsonNode messages = body.path("messages");
        if (!messages.isArray() || messages.isEmpty()) {
            return null;
        }
        String model = body.path("model").asText("stub");
        Long seed = body.path("seed").isNumber() ? body.get("seed").asLong() : null;
        List<String> tools = new ArrayList<>();
        body.path("tools").forEach(t -> tools.add(t.path("function").path("name").asText()));
        int words = 0;
        String task = null;
        List<String> outputs = new ArrayList<>();
        for (JsonNode m : messages) {
            String content = m.path("content").asText("");
            words += WordCount.of(content);
            switch (m.path("role").asText()) {
                case "user" -> task = content;
                case "tool" -> outputs.add(content);
                default -> {
                }
            }
        }
        if (task == null) {
            return null;
        }
        if (tools.isEmpty()) {
            return code(task, model, seed, words);
        }
        List<String[]> script = script(task, model, seed, tools);
        boolean quirky = StubModelServer.SMALL_MODEL.equals(model);
        if (outputs.size() < script.size()) {
            String[] call = script.get(outputs.size());
            return new ToolTurn(model, "", List.<String[]>of(call), quirky, words, 5);
        }
        if (script.isEmpty()) {
            return new ToolTurn(model, "re: " + task, List.of(), quirky, words, WordCount.of(task) + 1);
        }
        String answer = outputs.get(outputs.size() - 1).replaceAll("\\n\\[exit status \\d+\\]$", "").strip();
        if (tools.contains("submit")) {
            return new ToolTurn(model, "", List.<String[]>of(new String[]{"submit", "answer", answer}), quirky, words, 3);
        }
        return new ToolTurn(model, answer, List.of(), quirky, words, WordCount.of(answer));
    }

    /** The tool calls the task's script makes: {tool, parameter, value} each. */
    private static List<String[]> script(String task, String model, Long seed, List<String> tools) {
        List<String[]> calls = new ArrayList<>();
        if (tools.contains("bash")) {
            Matcher m = BACKTICKS.matcher(task);
            while (m.find()) {
                calls.add(new String[]{"bash", "cmd", m.group(1)});
            }
        }
        Matcher c = COMPUTE.matcher(task);
        if (calls.isEmpty() && tools.contains("python") && c.find()) {
            String x = c.group(1).strip();
            if (Math.floorMod((task + "|" + model + "|" + seed).hashCode(), 3) == 0) {
                calls.add(new String[]{"python", "code", "print(" + x});
            }
            calls.add(new String[]{"python", "code", "print(" + x + ")"});
        }
        return calls;
    }

    /** A code problem's answer: the known solution in a fence, or (3 in 10, or unknown) prose. */
    private static StubAnswer code(String task, String model, Long seed, int words) {
        Matcher f = FUNCTION.matcher(task);
        if (!f.find()) {
            return null;
        }
        String solution = SOLUTIONS.get(f.group(1));
        boolean wrong = Math.floorMod((task + "|" + model + "|" + seed).hashCode(), 10) < 3;
        String text = solution == null || wrong
                ? "I would write " + f.group(1) + " with a loop, but I am not sure of the details."
                : "Here is the function:\n\n```python\n" + solution + "```\n";
        return new Completion(model, text, words, WordCount.of(text));
    }

    private static Map<String, String> solutions() {
        try (InputStream in = StubAgent.class.getResourceAsStream("stub-solutions.json")) {
            if (in == null) {
                throw new IllegalStateException("stub-solutions.json is missing beside " + StubAgent.class.getName());
            }
            return JSON.readValue(in, new com.fasterxml.jackson.core.type.TypeReference<Map<String, String>>() {
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int indexOf(byte[] body, byte[] what) {
        outer:
        for (int i = 0; i + what.length <= body.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (body[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * One agent turn: text, and tool calls each {tool, parameter, value}; {@code quirky} leaves the
     * ids out and sends arguments as an object.
     */
    private record ToolTurn(String model, String text, List<String[]> calls, boolean quirky, int promptTokens,
                            int completionTokens) implements StubAnswer {
        @Override
        public String json(long id, long created) {
            ObjectNode root = JSON.createObjectNode().put("id", "chatcmpl-" + id).put("object", "chat.completion")
                    .put("created", created).put("model", model);
            ObjectNode choice = root.putArray("choices").addObject().put("index", 0);
            ObjectNode message = choice.putObject("message").put("role", "assistant");
            if (calls.isEmpty()) {
                message.put("content", text);
            } else {
                message.putNull("content");
                ArrayNode toolCalls = message.putArray("tool_calls");
                for (int i = 0; i < calls.size(); i++) {
                    String[] c = calls.get(i);
                    ObjectNode call = toolCalls.addObject();
                    if (!quirky) {
                        call.put("id", "call_" + id + "_" + i).put("type", "function");
                    }
                    ObjectNode function = call.putObject("function").put("name", c[0]);
                    ObjectNode arguments = JSON.createObjectNode().put(c[1], c[2]);
                    if (quirky) {
                        function.set("arguments", arguments);
                    } else {
                        function.put("arguments", arguments.toString());
                    }
                }
            }
            choice.put("finish_reason", calls.isEmpty() ? "stop" : "tool_calls");
            root.putObject("usage").put("prompt_tokens", promptTokens).put("completion_tokens", completionTokens)
                    .put("total_tokens", promptTokens + completionTokens);
            return root.toString();
        }
    }
}
