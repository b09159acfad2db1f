package dev.panoptes.control;

/**
 * The model's answer to one vignette.
 *
 * @param vignetteId   the vignette answered
 * @param response     the text the model produced; empty (never null) when it produced none
 * @param model        the model name the API reported, or null
 * @param finishReason why generation stopped ("stop", "length", ...), or null
 * @param latencyMs    how long the call took, or null when unknown
 * @param usage        token usage, or null when the API did not report it
 */
public record ResponseRecord(String vignetteId, String response, String model, String finishReason,
                             Long latencyMs, Usage usage) {
    /** @throws IllegalArgumentException when the vignette id is empty or latency negative */
    public ResponseRecord {
        Checks.notEmpty(vignetteId, "vignetteId of a response record");
        response = response == null ? "" : response;
        if (latencyMs != null) {
            Checks.notNegative(latencyMs, "latencyMs of vignette '" + vignetteId + "'");
        }
    }

    /** A record holding only the response text. */
    public ResponseRecord(String vignetteId, String response) {
        this(vignetteId, response, null, null, null, null);
    }
}
