package dev.panoptes.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;

/**
 * Reads what the coordinator needs from a sample's transcript, the JSON a worker stores with the
 * answer of a vignette run in a sandbox ({@link ResponseRecord#transcript()}):
 *
 * <pre>{@code
 * {"messages": [...the chat in OpenAI's shape, tool calls and tool messages included...],
 *  "events": [{"type": "model", ...}, {"type": "tool", "name", "arguments", "output", "exitStatus",
 *              "durationMs", "truncated", "error"?}, ...],
 *  "turns": 3, "tokens": 812, "limit": null or "turns" / "tokens" / "time" (the limit the sample met),
 *  "check": {"command", "exitStatus", "output", "passed", "durationMs"} or absent}
 * }</pre>
 *
 * Stateless and thread-safe.
 */
public final class Transcripts {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Transcripts() {
    }

    /**
     * The check's verdict.
     *
     * @return true when the check ran and exited 0, false when it ran and did not, null when the
     *         transcript holds no check (none declared, or the transcript is missing or unreadable)
     */
    public static Boolean checkPassed(String transcript) {
        JsonNode check = tree(transcript).path("check");
        return check.isObject() && check.has("passed") ? check.get("passed").asBoolean() : null;
    }

    /** The check's exit status and the first of its output, for a score's explanation; "" when none. */
    public static String checkSummary(String transcript) {
        JsonNode check = tree(transcript).path("check");
        if (!check.isObject()) {
            return "";
        }
        String output = check.path("output").asText("").strip();
        if (output.length() > 300) {
            output = output.substring(0, 300) + "...";
        }
        return "check '" + check.path("command").asText() + "' exited " + check.path("exitStatus").asText()
                + (output.isEmpty() ? "" : ": " + output);
    }

    /** The limit the sample met ("turns", "tokens", "time"), or null when it met none. */
    public static String limit(String transcript) {
        JsonNode limit = tree(transcript).path("limit");
        return limit.isTextual() ? limit.asText() : null;
    }

    /** The transcript's JSON tree; a missing node for null or unreadable text. */
    public static JsonNode tree(String transcript) {
        if (transcript == null || transcript.isEmpty()) {
            return JSON.missingNode();
        }
        try {
            JsonNode n = JSON.readTree(transcript);
            return n == null ? JSON.missingNode() : n;
        } catch (IOException e) {
            return JSON.missingNode();
        }
    }
}
