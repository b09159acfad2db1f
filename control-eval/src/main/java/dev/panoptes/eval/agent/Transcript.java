package dev.panoptes.eval.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Usage;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolCall;
import dev.panoptes.eval.http.ToolDefinitions;
import dev.panoptes.eval.sandbox.CommandResult;

import java.time.Instant;
import java.util.List;

/**
 * What happened in one sample's sandbox, built as it happens and written as the JSON
 * {@link dev.panoptes.control.Transcripts} documents: the chat (messages in OpenAI's shape, tool
 * calls and tool messages included), the events (setup commands, model turns, tool calls with
 * their output as the model saw it, exit status and duration, each with the time it completed),
 * the tools offered, the limit met, and the check's verdict. One sample's thread builds it; not thread-safe.
 */
final class Transcript {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ObjectNode root = JSON.createObjectNode();
    private final ArrayNode messages = root.putArray("messages");
    private final ArrayNode events = root.putArray("events");
    private int turns;
    private long promptTokens;
    private long completionTokens;
    private boolean usageSeen;

    /** The vignette's own turns, as the chat starts. */
    void start(List<ChatMessage> turns) {
        for (ChatMessage m : turns) {
            messages.addObject().put("role", m.role()).put("content", m.content());
        }
    }

    /** The tools the model is offered, as the chat requests define them (OpenAI's shape). */
    void tools(List<String> names) {
        root.set("tools", ToolDefinitions.of(JSON, names));
    }

    /** A setup command and what it did. */
    void setup(String command, CommandResult r) {
        ObjectNode e = events.addObject().put("type", "setup").put("command", command)
                .put("completedAt", Instant.now().toString());
        result(e, r, r.output());
    }

    /** One model turn: its answer, tool calls and usage. */
    void model(ModelResponse r) {
        turns++;
        Usage u = r.usage();
        if (u != null) {
            promptTokens += u.promptTokens();
            completionTokens += u.completionTokens();
            usageSeen = true;
        }
        ObjectNode e = events.addObject().put("type", "model").put("turn", turns).put("text", r.text())
                .put("durationMs", r.latencyMs()).put("completedAt", Instant.now().toString());
        if (r.finishReason() != null) {
            e.put("finishReason", r.finishReason());
        }
        if (u != null) {
            e.put("promptTokens", u.promptTokens()).put("completionTokens", u.completionTokens());
        }
        ArrayNode calls = e.putArray("toolCalls");
        for (ToolCall c : r.toolCalls()) {
            calls.addObject().put("id", c.id()).put("name", c.name()).put("arguments", c.arguments());
        }
        if (r.message() != null) {
            messages.add(r.message());
        } else {
            messages.addObject().put("role", "assistant").put("content", r.text());
        }
    }

    /**
     * One tool call: what the model asked, and what it was shown.
     *
     * @param r     what the command did, or null when nothing ran (an unknown tool, bad arguments, submit)
     * @param shown the tool message's content, as the model sees it
     * @param error why the call could not run, or null
     * @return the tool message, to send back to the model
     */
    JsonNode tool(ToolCall call, CommandResult r, String shown, String error) {
        ObjectNode e = events.addObject().put("type", "tool").put("id", call.id()).put("name", call.name())
                .put("arguments", call.arguments()).put("completedAt", Instant.now().toString());
        if (r != null) {
            result(e, r, shown);
        } else {
            e.put("output", shown);
        }
        if (error != null) {
            e.put("error", error);
        }
        ObjectNode message = JSON.createObjectNode().put("role", "tool").put("tool_call_id", call.id())
                .put("content", shown);
        messages.add(message);
        return message;
    }

    /** The check run after the answer. */
    void check(String command, CommandResult r) {
        ObjectNode c = root.putObject("check").put("command", command);
        result(c, r, CommandResult.cut(r.output(), 16 * 1024));
        c.put("passed", r.succeeded());
    }

    /** The limit the sample met: "turns", "tokens" or "time". */
    void limit(String which) {
        root.put("limit", which);
    }

    /** Model turns so far. */
    int turns() {
        return turns;
    }

    /** Tokens so far, prompt and completion, over every turn. */
    long tokens() {
        return promptTokens + completionTokens;
    }

    /** The usage summed over every turn, or null when no turn reported any. */
    Usage usage() {
        return usageSeen ? new Usage(promptTokens, completionTokens) : null;
    }

    /** The JSON text. */
    String json() {
        root.put("turns", turns).put("tokens", tokens());
        return root.toString();
    }

    private static void result(ObjectNode e, CommandResult r, String shown) {
        e.put("output", shown).put("exitStatus", r.exitStatus()).put("durationMs", r.duration().toMillis())
                .put("truncated", !shown.equals(r.output()) || r.outputCut()).put("timedOut", r.timedOut());
        if (r.failure() != null) {
            e.put("sandboxFailure", r.failure());
        }
    }
}
