package dev.panoptes.control.cost;

import dev.panoptes.control.Usage;

/**
 * One model's price, in US dollars per million tokens, as providers publish it: one figure for
 * prompt (input) tokens and one for completion (output) tokens. Immutable.
 *
 * @param inputPerMillion  USD per million prompt tokens; finite and not negative
 * @param outputPerMillion USD per million completion tokens; finite and not negative
 */
public record Price(double inputPerMillion, double outputPerMillion) {
    /** @throws IllegalArgumentException when a figure is negative, NaN or infinite */
    public Price {
        check(inputPerMillion, "input");
        check(outputPerMillion, "output");
    }

    /** What {@code usage} costs at this price, in USD. */
    public double cost(Usage usage) {
        return (usage.promptTokens() * inputPerMillion + usage.completionTokens() * outputPerMillion) / 1_000_000.0;
    }

    private static void check(double value, String which) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("the " + which + " price must be a number of USD per million tokens,"
                    + " 0 or more, got " + value);
        }
    }
}
