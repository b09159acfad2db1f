package dev.panoptes.control;

/**
 * Token usage the model API reported for one call.
 *
 * @param promptTokens     tokens in the request, not negative
 * @param completionTokens tokens generated, not negative
 */
public record Usage(long promptTokens, long completionTokens) {
    /** No tokens. */
    public static final Usage ZERO = new Usage(0, 0);

    /** @throws IllegalArgumentException when a count is negative */
    public Usage {
        Checks.notNegative(promptTokens, "promptTokens");
        Checks.notNegative(completionTokens, "completionTokens");
    }

    /** promptTokens + completionTokens. */
    public long totalTokens() {
        return promptTokens + completionTokens;
    }

    /** The sum of this usage and another. */
    public Usage plus(Usage other) {
        return new Usage(promptTokens + other.promptTokens, completionTokens + other.completionTokens);
    }
}
