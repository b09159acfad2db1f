package dev.panoptes.report;

import dev.panoptes.control.Usage;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One answer of one model to one vignette in one epoch, with its grade: a row of the samples
 * table in every report.
 *
 * <p>Immutable; {@code metadata} is copied (null becomes empty). Null values inside the
 * metadata are dropped, since reports treat a missing key and a null value alike.
 *
 * @param runId            the run that asked
 * @param model            the model the run asked for
 * @param epoch            the epoch, as the run numbered it
 * @param vignetteId       the vignette's id; samples of one vignette are one cluster in the statistics
 * @param jobId            the job that produced it
 * @param prompt           the text shown to people; for chat-format vignettes the caller renders the
 *                         messages as "role: content" lines
 * @param expected         the expected answer; null when the vignette has none
 * @param response         the model's answer; null when there is none
 * @param score            the grade, normally in [0, 1]; null when unscored (no expected answer, or not
 *                         graded yet). A non-finite value is treated as unscored by {@link RunStats}
 * @param explanation      the scorer's explanation; null when none
 * @param metadata         the vignette's metadata, for group-by; never null after construction
 * @param workerId         the worker that ran the job; null when unknown
 * @param apiModel         the model name the API reported, which may differ from {@code model}
 * @param latencyMs        the call's latency in milliseconds; null when unknown
 * @param promptTokens     prompt tokens the API reported; null when unknown
 * @param completionTokens completion tokens the API reported; null when unknown
 * @param finishReason     why the model stopped ("stop", "length", ...); null when unknown
 * @param error            null for an answer; for a failed answer (the model API gave none for this
 *                         vignette, see {@code ResponseRecord#error()}), why. A failed answer counts
 *                         as wrong (score 0) in the main figures, whatever its stored score
 * @param cachedFrom       for an answer served from the response cache (no model call), the run whose
 *                         answer it copies; null for an answer a model gave
 * @param transcript       for a vignette run in a sandbox, what happened there as the worker wrote it
 *                         (JSON, see {@code dev.panoptes.control.Transcripts}): model turns, tool calls,
 *                         outputs, exit status, durations, tokens; null for any other answer
 */
public record SampleRow(String runId, String model, int epoch, String vignetteId, String jobId,
                        String prompt, String expected, String response, Double score, String explanation,
                        Map<String, Object> metadata, String workerId, String apiModel, Long latencyMs,
                        Long promptTokens, Long completionTokens, String finishReason, String error,
                        String cachedFrom, String transcript) {
    /** @throws NullPointerException when runId, model or vignetteId is null */
    public SampleRow {
        Objects.requireNonNull(runId, "runId");
        // The messages are made only when thrown: a row is made per answer, a million per run.
        if (model == null) {
            throw new NullPointerException("model (runId=" + runId + ", jobId=" + jobId + ")");
        }
        if (vignetteId == null) {
            throw new NullPointerException("vignetteId (runId=" + runId + ", jobId=" + jobId + ")");
        }
        metadata = copyWithoutNulls(metadata);
    }

    /** A sample without a transcript (not run in a sandbox). */
    public SampleRow(String runId, String model, int epoch, String vignetteId, String jobId, String prompt,
                     String expected, String response, Double score, String explanation, Map<String, Object> metadata,
                     String workerId, String apiModel, Long latencyMs, Long promptTokens, Long completionTokens,
                     String finishReason, String error, String cachedFrom) {
        this(runId, model, epoch, vignetteId, jobId, prompt, expected, response, score, explanation, metadata,
                workerId, apiModel, latencyMs, promptTokens, completionTokens, finishReason, error, cachedFrom, null);
    }

    /** A sample a model gave (not served from the cache). */
    public SampleRow(String runId, String model, int epoch, String vignetteId, String jobId, String prompt,
                     String expected, String response, Double score, String explanation, Map<String, Object> metadata,
                     String workerId, String apiModel, Long latencyMs, Long promptTokens, Long completionTokens,
                     String finishReason, String error) {
        this(runId, model, epoch, vignetteId, jobId, prompt, expected, response, score, explanation, metadata,
                workerId, apiModel, latencyMs, promptTokens, completionTokens, finishReason, error, null, null);
    }

    /** A sample that is an answer (no error). */
    public SampleRow(String runId, String model, int epoch, String vignetteId, String jobId, String prompt,
                     String expected, String response, Double score, String explanation, Map<String, Object> metadata,
                     String workerId, String apiModel, Long latencyMs, Long promptTokens, Long completionTokens,
                     String finishReason) {
        this(runId, model, epoch, vignetteId, jobId, prompt, expected, response, score, explanation, metadata,
                workerId, apiModel, latencyMs, promptTokens, completionTokens, finishReason, null, null, null);
    }

    /** True when this answer was served from the response cache (see {@link #cachedFrom()}). */
    public boolean cached() {
        return cachedFrom != null;
    }

    /**
     * The tokens this answer cost its run: none when the cache served it (it repeats its source's
     * usage but made no call), else the counts the API reported (unknown counts as 0). Token totals
     * and costs in every report add these up.
     */
    public Usage chargedUsage() {
        if (cached()) {
            return Usage.ZERO;
        }
        return new Usage(promptTokens == null ? 0 : promptTokens, completionTokens == null ? 0 : completionTokens);
    }

    /** True when this sample has a transcript (see {@link #transcript()}). */
    public boolean hasTranscript() {
        return transcript != null && !transcript.isEmpty();
    }

    /** True when the model API gave no answer for this vignette (see {@link #error()}). */
    public boolean failed() {
        return error != null;
    }

    /**
     * The score this sample has in the main figures: 0 for a failed answer, its grade when it
     * has a usable one, else null (unscored, in no figure).
     */
    public Double figureScore() {
        if (failed()) {
            return 0.0;
        }
        return scored() ? score : null;
    }

    /** True when this sample carries a usable grade. */
    public boolean scored() {
        return score != null && Double.isFinite(score);
    }

    /** Map.copyOf rejects nulls, and immutable maps even throw on containsValue(null), so filter by hand. */
    private static Map<String, Object> copyWithoutNulls(Map<String, Object> metadata) {
        if (metadata == null || metadata.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> copy = new HashMap<>();
        metadata.forEach((key, value) -> {
            if (key != null && value != null) {
                copy.put(key, value);
            }
        });
        return Map.copyOf(copy);
    }
}
