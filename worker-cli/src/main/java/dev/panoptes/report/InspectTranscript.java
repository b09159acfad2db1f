package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.Transcripts;

import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;

/**
 * A sandboxed sample's transcript (the JSON a worker writes, see
 * {@link dev.panoptes.control.Transcripts}) in Inspect AI's terms, for {@link InspectSamples}:
 * the chat after the input as Inspect's messages ({@code ChatMessageAssistant} with its
 * {@code tool_calls}: id, function, arguments as an object; {@code ChatMessageTool} with
 * {@code tool_call_id}, {@code function} and {@code error}), and the sample's {@code events}:
 * a {@code ModelEvent} per model turn (its input, the tools offered, its output and usage), a
 * {@code ToolEvent} per tool call (arguments, the output as the model saw it, error) and a
 * {@code SandboxEvent} per setup command and for the check. What Inspect has no field for (a
 * command's exit status and duration, whether its output was cut) is in each event's
 * {@code metadata}.
 *
 * <p>Times: an event's {@code timestamp} is its completion time less its duration, when the
 * worker recorded the completion (transcripts of older workers did not: their events take
 * {@code fallbackStart}); {@code working_start} is the sum of the durations before it.
 *
 * <p>Stateless; any thread.
 */
final class InspectTranscript {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final JsonNode transcript;
    private final String model;
    private final Instant fallbackStart;
    /** The function each tool call id called, for the tool messages, which name only the id. */
    private final Map<String, String> functions = new HashMap<>();
    /** The error of each tool call that could not run, by call id. */
    private final Map<String, ObjectNode> errors = new HashMap<>();

    private InspectTranscript(JsonNode transcript, String model, Instant fallbackStart) {
        this.transcript = transcript;
        this.model = model;
        this.fallbackStart = fallbackStart == null ? Instant.EPOCH : fallbackStart;
        for (JsonNode e : transcript.path("events")) {
            if ("tool".equals(e.path("type").asText())) {
                functions.put(e.path("id").asText(), e.path("name").asText());
                ObjectNode error = error(e);
                if (error != null) {
                    errors.put(e.path("id").asText(), error);
                }
            }
        }
    }

    /**
     * The transcript of a sample, or null when it has none or it is not a transcript's JSON.
     *
     * @param model         the model name its events give
     * @param fallbackStart the time of events whose completion the worker did not record
     */
    static InspectTranscript of(SampleRow row, String model, Instant fallbackStart) {
        if (!row.hasTranscript()) {
            return null;
        }
        JsonNode tree = Transcripts.tree(row.transcript());
        return tree.isObject() && tree.path("messages").isArray() ? new InspectTranscript(tree, model, fallbackStart)
                : null;
    }

    /**
     * Appends the chat after the sample's input to {@code messages}: every message from the
     * first the model wrote (the ones before it are the vignette's own, which the input holds).
     */
    void appendMessages(ArrayNode messages) {
        for (JsonNode m : generated()) {
            messages.add(message(m));
        }
    }

    /**
     * The sample's events: model turns, tool calls, setup commands and the check, in order.
     *
     * @param input the sample's input, as Inspect messages (the first model turn's input)
     */
    ArrayNode events(ArrayNode input) {
        ArrayNode events = JSON.createArrayNode();
        ArrayNode chat = input.deepCopy();
        JsonNode[] generated = generated();
        int next = 0;
        long working = 0;
        for (JsonNode e : transcript.path("events")) {
            String type = e.path("type").asText();
            long ms = e.path("durationMs").asLong(0);
            ObjectNode event;
            if ("model".equals(type)) {
                // This turn's answer is the next assistant message; its input, every message before it.
                while (next < generated.length && !"assistant".equals(generated[next].path("role").asText())) {
                    chat.add(message(generated[next++]));
                }
                ObjectNode answer = next < generated.length ? message(generated[next++])
                        : assistant(e.path("text").asText(""), e.path("toolCalls"));
                event = modelEvent(e, chat.deepCopy(), answer);
                chat.add(answer);
            } else if ("tool".equals(type)) {
                event = toolEvent(e);
            } else {
                event = sandboxEvent(e.path("command").asText(""), e);
            }
            times(event, e, ms, working);
            events.add(event);
            working += ms;
        }
        JsonNode check = transcript.path("check");
        if (check.isObject()) {
            ObjectNode event = sandboxEvent(check.path("command").asText(""), check);
            ((ObjectNode) event.get("metadata")).put("check", true).put("passed", check.path("passed").asBoolean());
            times(event, check, check.path("durationMs").asLong(0), working);
            events.add(event);
        }
        return events;
    }

    /** The limit the sample met ("turns", "tokens", "time"), or null. */
    String limit() {
        JsonNode limit = transcript.path("limit");
        return limit.isTextual() ? limit.asText() : null;
    }

    /** The messages from the first the model wrote on. */
    private JsonNode[] generated() {
        JsonNode messages = transcript.path("messages");
        int first = 0;
        while (first < messages.size() && !"assistant".equals(messages.get(first).path("role").asText())) {
            first++;
        }
        JsonNode[] out = new JsonNode[messages.size() - first];
        for (int i = first; i < messages.size(); i++) {
            out[i - first] = messages.get(i);
        }
        return out;
    }

    /** A chat message in OpenAI's shape as Inspect's. */
    private ObjectNode message(JsonNode m) {
        String role = m.path("role").asText();
        String content = m.path("content").isTextual() ? m.path("content").asText() : "";
        if ("assistant".equals(role)) {
            JsonNode calls = JSON.createArrayNode();
            if (m.path("tool_calls").isArray()) {
                ArrayNode flat = JSON.createArrayNode();
                for (JsonNode c : m.path("tool_calls")) {
                    flat.addObject().put("id", c.path("id").asText()).put("name", c.path("function").path("name")
                            .asText()).set("arguments", c.path("function").path("arguments"));
                }
                calls = flat;
            }
            return assistant(content, calls);
        }
        ObjectNode out = JSON.createObjectNode().put("role", role).put("content", content);
        if ("tool".equals(role)) {
            String id = m.path("tool_call_id").asText();
            out.put("tool_call_id", id);
            out.put("function", functions.getOrDefault(id, ""));
            ObjectNode error = errors.get(id);
            if (error != null) {
                out.set("error", error.deepCopy());
            } else {
                out.putNull("error");
            }
        } else {
            out.put("source", "input");
        }
        return out;
    }

    /** Inspect's {@code ChatMessageAssistant}; {@code calls} as {id, name, arguments (text or object)}. */
    private ObjectNode assistant(String content, JsonNode calls) {
        ObjectNode out = JSON.createObjectNode().put("role", "assistant").put("content", content)
                .put("source", "generate").put("model", model);
        if (calls.isArray() && !calls.isEmpty()) {
            ArrayNode toolCalls = out.putArray("tool_calls");
            for (JsonNode c : calls) {
                ObjectNode call = toolCalls.addObject().put("id", c.path("id").asText())
                        .put("function", c.path("name").asText()).put("type", "function");
                arguments(call, c.path("arguments"));
            }
        }
        return out;
    }

    private ObjectNode modelEvent(JsonNode e, ArrayNode input, ObjectNode answer) {
        ObjectNode event = JSON.createObjectNode().put("event", "model").put("model", model);
        event.set("input", input);
        ArrayNode tools = event.putArray("tools");
        for (JsonNode t : transcript.path("tools")) {
            JsonNode f = t.path("function");
            ObjectNode info = tools.addObject().put("name", f.path("name").asText())
                    .put("description", f.path("description").asText(""));
            info.set("parameters", f.path("parameters").isObject() ? f.path("parameters").deepCopy()
                    : JSON.createObjectNode().put("type", "object"));
        }
        event.put("tool_choice", "auto");
        event.putObject("config");
        ObjectNode output = event.putObject("output").put("model", model);
        ObjectNode choice = output.putArray("choices").addObject();
        choice.set("message", answer);
        String finish = e.path("finishReason").asText("");
        choice.put("stop_reason", answer.has("tool_calls") ? "tool_calls" : "length".equals(finish) ? "max_tokens"
                : "stop".equals(finish) ? "stop" : "unknown");
        output.put("completion", answer.path("content").asText(""));
        if (e.has("promptTokens") || e.has("completionTokens")) {
            output.set("usage", InspectSamples.usage(e.path("promptTokens").asLong(0),
                    e.path("completionTokens").asLong(0)));
        }
        output.put("time", e.path("durationMs").asLong(0) / 1000.0);
        return event;
    }

    private ObjectNode toolEvent(JsonNode e) {
        ObjectNode event = JSON.createObjectNode().put("event", "tool").put("type", "function")
                .put("id", e.path("id").asText()).put("function", e.path("name").asText());
        arguments(event, e.path("arguments"));
        event.put("result", e.path("output").asText(""));
        event.putNull("truncated");
        ObjectNode error = error(e);
        if (error != null) {
            event.set("error", error);
        } else {
            event.putNull("error");
        }
        event.putArray("events");
        ObjectNode metadata = event.putObject("metadata");
        result(metadata, e);
        return event;
    }

    private static ObjectNode sandboxEvent(String command, JsonNode e) {
        ObjectNode event = JSON.createObjectNode().put("event", "sandbox").put("action", "exec").put("cmd", command);
        if (e.has("exitStatus")) {
            event.put("result", e.path("exitStatus").asInt());
        }
        event.put("output", e.path("output").asText(""));
        result(event.putObject("metadata"), e);
        return event;
    }

    /** What Inspect has no field for: exit status, duration, a cut output, a timeout, the sandbox's failure. */
    private static void result(ObjectNode metadata, JsonNode e) {
        for (String field : new String[] {"exitStatus", "durationMs", "truncated", "timedOut", "sandboxFailure"}) {
            if (e.has(field)) {
                metadata.set(snake(field), e.get(field));
            }
        }
    }

    private static String snake(String camel) {
        return camel.replaceAll("([A-Z])", "_$1").toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Inspect's {@code ToolCallError} for a call that could not run (unknown tool, bad
     * arguments) or ran past its time; null for one that ran (a non-zero exit is its output's).
     */
    private static ObjectNode error(JsonNode e) {
        if (e.hasNonNull("error")) {
            return JSON.createObjectNode().put("type", "parsing").put("message", e.path("error").asText());
        }
        if (e.path("timedOut").asBoolean(false)) {
            return JSON.createObjectNode().put("type", "timeout").put("message", e.path("output").asText(""));
        }
        return null;
    }

    /**
     * Sets a call's {@code arguments} as Inspect keeps them, a JSON object; arguments that are
     * not one are kept as {@code {}} with the text in {@code parse_error}, as Inspect does.
     */
    private static void arguments(ObjectNode call, JsonNode arguments) {
        JsonNode parsed = arguments;
        if (arguments.isTextual()) {
            try {
                parsed = JSON.readTree(arguments.asText());
            } catch (IOException ex) {
                parsed = null;
            }
        }
        if (parsed != null && parsed.isObject()) {
            call.set("arguments", parsed);
        } else {
            call.putObject("arguments");
            call.put("parse_error", "the arguments are not a JSON object: " + arguments.asText(arguments.toString()));
        }
    }

    private void times(ObjectNode event, JsonNode e, long ms, long workingBefore) {
        Instant completed = null;
        try {
            completed = e.hasNonNull("completedAt") ? Instant.parse(e.path("completedAt").asText()) : null;
        } catch (DateTimeParseException ignored) {
            // Not a time: the event takes the fallback, as an older worker's does.
        }
        Instant started = completed == null ? fallbackStart.plusMillis(workingBefore) : completed.minusMillis(ms);
        event.put("timestamp", started.toString());
        event.put("working_start", workingBefore / 1000.0);
        if (completed != null) {
            event.put("completed", completed.toString());
        }
        if (!"sandbox".equals(event.path("event").asText())) {
            event.put("working_time", ms / 1000.0);
        }
    }
}
