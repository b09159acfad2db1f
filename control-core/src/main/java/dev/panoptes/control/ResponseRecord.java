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
 * @param error        null for an answer; for a failed answer, why the model API gave none, when
 *                     the failure is the vignette's own (the same request fails anywhere: an
 *                     HTTP 400 for an over-long prompt, a content filter) and so is stored as
 *                     this vignette's result instead of failing its job. {@code response} is
 *                     empty then
 * @param transcript   for a vignette run in a sandbox, what happened there as JSON: every model
 *                     turn, tool call and output, the limit met, the check's verdict (see
 *                     {@link Transcripts}); null for any other answer
 */
public record ResponseRecord(String vignetteId, String response, String model, String finishReason,
                             Long latencyMs, Usage usage, String error, String transcript) {
    /** @throws IllegalArgumentException when the vignette id is empty or latency negative */
    public ResponseRecord {
        Checks.notEmpty(vignetteId, "vignetteId of a response record");
        response = response == null ? "" : response;
        if (latencyMs != null && latencyMs < 0) {
            // The message is made only here: this constructor runs for every answer decoded.
            throw new IllegalArgumentException("latencyMs of vignette '" + vignetteId + "' must not be negative, got "
                    + latencyMs);
        }
        if (error != null && error.isEmpty()) {
            throw new IllegalArgumentException("the error of a failed answer to vignette '" + vignetteId
                    + "' must say why, not be empty");
        }
    }

    /** A record without a transcript. */
    public ResponseRecord(String vignetteId, String response, String model, String finishReason, Long latencyMs,
                          Usage usage, String error) {
        this(vignetteId, response, model, finishReason, latencyMs, usage, error, null);
    }

    /** This record with a transcript. */
    public ResponseRecord withTranscript(String json) {
        return new ResponseRecord(vignetteId, response, model, finishReason, latencyMs, usage, error, json);
    }

    /** An answer (not a failed one). */
    public ResponseRecord(String vignetteId, String response, String model, String finishReason, Long latencyMs,
                          Usage usage) {
        this(vignetteId, response, model, finishReason, latencyMs, usage, null, null);
    }

    /**
     * A failed answer: the model API refused this vignette's request for what it holds.
     *
     * @param error what the API said and why it is the vignette's own failure; not empty
     */
    public static ResponseRecord failed(String vignetteId, String model, Long latencyMs, String error) {
        Checks.notEmpty(error, "error of a failed answer");
        return new ResponseRecord(vignetteId, "", model, null, latencyMs, null, error, null);
    }

    /** True when this is a failed answer (see {@link #error()}). */
    public boolean isFailed() {
        return error != null;
    }

    /** A record holding only the response text. */
    public ResponseRecord(String vignetteId, String response) {
        this(vignetteId, response, null, null, null, null, null, null);
    }
}
