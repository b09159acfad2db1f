package dev.panoptes.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.control.Usage;

import java.util.List;

/**
 * The model's answer to one prompt.
 *
 * @param text         the generated text; empty (never null) when the API returned null content
 * @param finishReason why generation stopped, or null when not reported
 * @param model        the model name the server reported, or null
 * @param usage        token usage, or null when the server did not report it
 * @param latencyMs    wall-clock time of the call, retries included; for a sample run in a sandbox,
 *                     the time of its whole run (sandbox, turns, tools and check)
 * @param toolCalls    the tools the model called, in order; empty (never null) when it called none
 * @param message      the assistant message as the server sent it (tool-call ids it lacked filled
 *                     in), for a tool loop to send back unchanged; null when not kept
 * @param transcript   for a sample run in a sandbox, its whole transcript as JSON (see
 *                     {@link dev.panoptes.control.Transcripts}); null for one model call
 */
public record ModelResponse(String text, String finishReason, String model, Usage usage, long latencyMs,
                            List<ToolCall> toolCalls, JsonNode message, String transcript) {
    public ModelResponse {
        text = text == null ? "" : text;
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    }

    /** An answer without tool calls. */
    public ModelResponse(String text, String finishReason, String model, Usage usage, long latencyMs) {
        this(text, finishReason, model, usage, latencyMs, List.of(), null, null);
    }

    /** This answer with another latency. */
    public ModelResponse withLatency(long ms) {
        return new ModelResponse(text, finishReason, model, usage, ms, toolCalls, message, transcript);
    }

    /** An answer with tool calls, as a server sent it. */
    public ModelResponse(String text, String finishReason, String model, Usage usage, long latencyMs,
                         List<ToolCall> toolCalls, JsonNode message) {
        this(text, finishReason, model, usage, latencyMs, toolCalls, message, null);
    }

    /** The record a worker stores for this answer to {@code vignetteId}, its transcript included. */
    public dev.panoptes.control.ResponseRecord record(String vignetteId) {
        return new dev.panoptes.control.ResponseRecord(vignetteId, text, model, finishReason, latencyMs, usage, null,
                transcript);
    }
}
