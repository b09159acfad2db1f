package dev.panoptes.control;

/**
 * Model parameters that apply to every vignette of a spec. Every field is optional: null means
 * "let the model API use its default".
 *
 * @param system      a system message sent before each prompt
 * @param temperature sampling temperature, 0 to 2
 * @param maxTokens   the most tokens the model may generate, at least 1
 * @param seed        a seed for APIs that support reproducible sampling
 */
public record SpecParams(String system, Double temperature, Integer maxTokens, Long seed) {
    /** No parameters at all. */
    public static final SpecParams NONE = new SpecParams(null, null, null, null);

    /** @throws IllegalArgumentException when temperature or maxTokens is out of range */
    public SpecParams {
        if (temperature != null && (temperature.isNaN() || temperature < 0 || temperature > 2)) {
            throw new IllegalArgumentException("temperature must be between 0 and 2, got " + temperature);
        }
        if (maxTokens != null && maxTokens < 1) {
            throw new IllegalArgumentException("maxTokens must be at least 1, got " + maxTokens);
        }
    }

    /** True when no parameter is set. */
    public boolean isEmpty() {
        return system == null && temperature == null && maxTokens == null && seed == null;
    }
}
