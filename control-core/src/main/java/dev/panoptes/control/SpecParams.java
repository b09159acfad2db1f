package dev.panoptes.control;

import java.util.List;

/**
 * Model parameters that apply to every vignette of a spec. Every field is optional: null means
 * "let the model API (or the worker) use its default".
 *
 * @param system      a system message sent before each prompt
 * @param temperature sampling temperature, 0 to 2
 * @param maxTokens   the most tokens the model may generate, at least 1
 * @param seed        a seed for APIs that support reproducible sampling
 * @param model       the model that must answer; a worker sends it as the request's model. Null
 *                    lets the worker use its own (a run that names no model)
 * @param topP        nucleus sampling's probability mass, above 0 and at most 1 (sent as
 *                    {@code top_p})
 * @param stop        stop sequences, at most 4 (OpenAI's limit), each non-empty (sent as
 *                    {@code stop}); null or empty for none
 * @param extraBody   further fields of the request body, as a JSON object's text with its keys
 *                    sorted (see {@code ExtraBody}), for options a server understands that this
 *                    record does not name (vLLM's {@code min_p}, {@code repetition_penalty}); null
 *                    for none
 * @param modelSource what identifies the model server that answers (the endpoint, or a name the
 *                    user gives a fleet of identical servers), or null when unknown. Never sent
 *                    to a model or a worker: it only decides which stored answers may stand for
 *                    this request ({@link RequestKey}) and which run this is
 */
public record SpecParams(String system, Double temperature, Integer maxTokens, Long seed, String model,
                         Double topP, List<String> stop, String extraBody, String modelSource) {
    /** No parameters at all. */
    public static final SpecParams NONE = new SpecParams(null, null, null, null, null);
    /** The most stop sequences a request may carry: OpenAI's limit. */
    public static final int MAX_STOP = 4;

    /**
     * @throws IllegalArgumentException when temperature, maxTokens or topP is out of range, a stop
     *                                  sequence is empty or there are too many, or model is blank
     */
    public SpecParams {
        if (temperature != null && (temperature.isNaN() || temperature < 0 || temperature > 2)) {
            throw new IllegalArgumentException("temperature must be between 0 and 2, got " + temperature);
        }
        if (maxTokens != null && maxTokens < 1) {
            throw new IllegalArgumentException("maxTokens must be at least 1, got " + maxTokens);
        }
        if (model != null && model.isBlank()) {
            throw new IllegalArgumentException("model must not be blank");
        }
        if (topP != null && (topP.isNaN() || topP <= 0 || topP > 1)) {
            throw new IllegalArgumentException("top_p must be above 0 and at most 1, got " + topP);
        }
        stop = stop == null || stop.isEmpty() ? null : List.copyOf(stop);
        if (stop != null) {
            if (stop.size() > MAX_STOP) {
                throw new IllegalArgumentException("at most " + MAX_STOP + " stop sequences, got " + stop.size());
            }
            for (String s : stop) {
                if (s.isEmpty()) {
                    throw new IllegalArgumentException("a stop sequence must not be empty");
                }
            }
        }
        if (extraBody != null && extraBody.isBlank()) {
            extraBody = null;
        }
        if (modelSource != null && modelSource.isBlank()) {
            modelSource = null;
        }
    }

    /** Parameters with the first five fields only. */
    public SpecParams(String system, Double temperature, Integer maxTokens, Long seed, String model) {
        this(system, temperature, maxTokens, seed, model, null, null, null, null);
    }

    /** Parameters that name no model. */
    public SpecParams(String system, Double temperature, Integer maxTokens, Long seed) {
        this(system, temperature, maxTokens, seed, null);
    }

    /** True when no parameter is sent (the model source is not sent, so it does not count). */
    public boolean isEmpty() {
        return system == null && temperature == null && maxTokens == null && seed == null && model == null
                && topP == null && stop == null && extraBody == null;
    }

    /** These parameters for {@code model}. */
    public SpecParams withModel(String model) {
        return new SpecParams(system, temperature, maxTokens, seed, model, topP, stop, extraBody, modelSource);
    }

    /** These parameters with {@code seed}. */
    public SpecParams withSeed(Long seed) {
        return new SpecParams(system, temperature, maxTokens, seed, model, topP, stop, extraBody, modelSource);
    }

    /** These parameters with the sampling options OpenAI-compatible servers differ in. */
    public SpecParams withSampling(Double topP, List<String> stop, String extraBody) {
        return new SpecParams(system, temperature, maxTokens, seed, model, topP, stop, extraBody, modelSource);
    }

    /** These parameters answered by the model server {@code modelSource} names (null: unknown). */
    public SpecParams withModelSource(String modelSource) {
        return new SpecParams(system, temperature, maxTokens, seed, model, topP, stop, extraBody, modelSource);
    }
}
