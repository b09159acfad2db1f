package dev.panoptes.control.stats;

import java.util.Objects;

/**
 * One scored answer. Samples that share a {@code cluster} are answers to the same vignette
 * (for example in different epochs); {@link Accuracy} treats them as correlated, not as
 * independent evidence.
 *
 * <p>Immutable and thread-safe.
 *
 * @param cluster the vignette id; samples of the same vignette in different epochs share it
 * @param value   the score, expected in [0, 1]; only finiteness is enforced here, but the
 *                confidence interval {@link Accuracy} reports is clamped to [0, 1]
 */
public record Sample(String cluster, double value) {
    /**
     * @throws NullPointerException     when cluster is null
     * @throws IllegalArgumentException when value is NaN or infinite
     */
    public Sample {
        Objects.requireNonNull(cluster, "sample cluster must not be null");
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException(
                    "sample value must be finite, got " + value + " (cluster=" + cluster + ")");
        }
    }
}
