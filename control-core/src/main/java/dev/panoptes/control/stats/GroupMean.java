package dev.panoptes.control.stats;

import java.util.Collection;

/**
 * The unweighted mean of several groups' estimates, each group counting once whatever its size:
 * lm-eval's group aggregate with {@code weight_by_size: false} (with {@code weight_by_size: true}
 * it is the mean over every sample, the run's own figure). The groups are independent samples, so
 * the standard error is {@code sqrt(sum of SE^2) / k}, and the interval the normal one around the
 * mean, clipped to [0, 1]; where a group's standard error is undefined (one sample or one
 * vignette), so is the mean's, and its interval is the mean of the groups' intervals.
 *
 * <p>Stateless.
 */
public final class GroupMean {
    /** How the interval is computed, for headings. */
    public static final String METHOD = "unweighted mean over groups, SE sqrt(sum SE^2)/k";
    private static final double Z = 1.959963984540054;

    private GroupMean() {
    }

    /**
     * @param groups the groups' estimates; those with no sample are left out
     * @return the mean over the groups with samples, or {@link Estimate#empty()} when none has any
     */
    public static Estimate of(Collection<Estimate> groups) {
        int k = 0;
        int n = 0;
        int clusters = 0;
        boolean clustered = false;
        double sum = 0;
        double variance = 0;
        double lows = 0;
        double highs = 0;
        for (Estimate e : groups) {
            if (e.n() == 0) {
                continue;
            }
            k++;
            n += e.n();
            clusters += e.clusters();
            clustered |= e.clustered();
            sum += e.mean();
            variance += e.standardError() * e.standardError();
            lows += e.ciLow();
            highs += e.ciHigh();
        }
        if (k == 0) {
            return Estimate.empty();
        }
        double mean = sum / k;
        double se = Math.sqrt(variance) / k;
        if (Double.isNaN(se)) {
            return new Estimate(n, clusters, mean, Double.NaN, Math.min(mean, lows / k), Math.max(mean, highs / k),
                    clustered);
        }
        return new Estimate(n, clusters, mean, se, Math.max(0, mean - Z * se), Math.min(1, mean + Z * se), clustered);
    }
}
