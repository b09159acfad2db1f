package dev.panoptes.eval;

import dev.panoptes.control.Usage;

/**
 * The model's answer to one prompt.
 *
 * @param text         the generated text; empty (never null) when the API returned null content
 * @param finishReason why generation stopped, or null when not reported
 * @param model        the model name the server reported, or null
 * @param usage        token usage, or null when the server did not report it
 * @param latencyMs    wall-clock time of the call, retries included
 */
public record ModelResponse(String text, String finishReason, String model, Usage usage, long latencyMs) {
    public ModelResponse {
        text = text == null ? "" : text;
    }
}
