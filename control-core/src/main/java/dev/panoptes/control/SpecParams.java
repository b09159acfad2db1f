package dev.panoptes.control;

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
 */
public record SpecParams(String system, Double temperature, Integer maxTokens, Long seed, String model) {
    /** No parameters at all. */
    public static final SpecParams NONE = new SpecParams(null, null, null, null, null);

    /** @throws IllegalArgumentException when temperature or maxTokens is out of range, or model is blank */
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
    }

    /** Parameters that name no model. */
    public SpecParams(String system, Double temperature, Integer maxTokens, Long seed) {
        this(system, temperature, maxTokens, seed, null);
    }

    /** True when no parameter is set. */
    public boolean isEmpty() {
        return system == null && temperature == null && maxTokens == null && seed == null && model == null;
    }

    /** These parameters for {@code model}. */
    public SpecParams withModel(String model) {
        return new SpecParams(system, temperature, maxTokens, seed, model);
    }

    /** These parameters with {@code seed}. */
    public SpecParams withSeed(Long seed) {
        return new SpecParams(system, temperature, maxTokens, seed, model);
    }
}
