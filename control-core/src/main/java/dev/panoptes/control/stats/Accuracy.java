package dev.panoptes.control.stats;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Mean score with a standard error and a 95 % interval, for eval runs in which a vignette may
 * be asked several times (epochs).
 *
 * <p>Repeated answers to one vignette are correlated: a model that gets a question right once
 * tends to get it right every epoch. Treating them as independent would shrink the standard
 * error as if each repeat were a new question. So when some vignette has more than one sample,
 * the standard error is the cluster-robust (sandwich) one over vignettes; with G clusters,
 * n samples, mean m and residual sums S_g = sum over cluster g of (x_i - m):
 * <pre>
 *   SE = sqrt( G / (G - 1) * sum_g S_g^2 ) / n
 * </pre>
 * When every vignette has exactly one sample it is the ordinary SE = s / sqrt(n), with s the
 * sample standard deviation (n - 1 denominator). The two agree in spirit: clustered SE with
 * one sample per cluster is sqrt(n / (n - 1) * sum (x_i - m)^2) / n = s / sqrt(n).
 *
 * <p><b>The interval</b> is the Wilson score interval ({@link Wilson}) of the mean score taken as
 * a proportion, with the effective sample size of the clustered design in place of n
 * ({@value #METHOD}):
 * <pre>
 *   deff  = sum_g S_g^2 / sum_i (x_i - m)^2     (Kish's design effect)
 *   n_eff = n / max(deff, 1)
 * </pre>
 * the variance of the mean over clusters relative to that of n independent samples, without the
 * small-sample factors of either. Without repeats every S_g is one residual, so deff = 1 and
 * n_eff = n: the textbook Wilson interval. When every vignette is asked k times and its epochs
 * all agree, deff = k and n_eff = G, the number of vignettes. A design effect below 1 (epochs of a
 * vignette disagreeing more than vignettes do, which only chance does) is taken as 1, so
 * clustering never narrows an interval. When the design effect is undefined, n_eff is the
 * number of vignettes G, as if every epoch repeated its vignette's answer:
 * <ul>
 *   <li>every sample has the same score (s = 0: 0/0), which includes all right and all wrong,
 *       the case where the Wald interval collapses to a point; the data then show exactly that
 *       epochs agree;</li>
 *   <li>a single vignette asked several times (G = 1: the clustered SE needs two clusters).</li>
 * </ul>
 * Wilson's variance p(1 - p) is the largest a score in [0, 1] with mean p can have, so for
 * partial-credit scores the interval errs on the wide side. A mean outside [0, 1] (a scorer out
 * of contract) is clamped to it for the interval only.
 *
 * <p>Cost: one pass over the samples, O(n) time, and one {@link ClusterTotals} per cluster: the
 * samples themselves need not be held ({@link ClusteredMean}).
 *
 * <p>Stateless and thread-safe.
 */
public final class Accuracy {
    /** The standard normal's 97.5th percentile, for a two-sided 95 % interval. */
    static final double Z_95 = 1.959963984540054;
    /** The interval's method, as reports name it once. */
    public static final String METHOD = "Wilson, clustered by vignette";

    private Accuracy() {
    }

    /**
     * Estimates the mean score of {@code samples}.
     *
     * @param samples the scored samples, none null; may be empty
     * @return the estimate; {@link Estimate#empty()} when there are no samples
     * @throws NullPointerException when samples or one of its elements is null
     */
    public static Estimate of(List<Sample> samples) {
        Objects.requireNonNull(samples, "samples");
        ClusteredMean mean = new ClusteredMean();
        for (int i = 0; i < samples.size(); i++) {
            Sample sample = samples.get(i);
            if (sample == null) {
                throw new NullPointerException("samples[" + i + "] is null (n=" + samples.size() + ")");
            }
            mean.add(sample.cluster(), sample.value());
        }
        return mean.estimate();
    }

    /**
     * Estimates a mean from running totals rather than the samples: the overall {@code totals}
     * and one {@link ClusterTotals} per cluster. The one computation behind {@link #of(List)} and
     * {@link ClusteredMean}, and behind a run's summary computed from answers streamed from the
     * store. The sums of squares come from each cluster's squared deviations about its own mean
     * and its mean's distance from the overall mean (the parallel form of the variance), so
     * nothing cancels; without repeats they are the residuals themselves, added in the order of
     * {@code clusters}.
     *
     * @param totals   the overall totals of the samples
     * @param clusters each cluster's totals, in the order of its first sample; none empty
     * @return the estimate; {@link Estimate#empty()} when there are no samples
     * @throws NullPointerException when an argument is null
     */
    public static Estimate of(ClusteredMean.Totals totals, Collection<? extends ClusterTotals> clusters) {
        Objects.requireNonNull(totals, "totals");
        Objects.requireNonNull(clusters, "clusters");
        int n = totals.n();
        if (n == 0) {
            return Estimate.empty();
        }
        // sum / n of n copies of 0.1 need not be exactly 0.1; taking the value itself makes
        // "everyone scored the same" come out with a standard error of exactly zero.
        double mean = totals.min() == totals.max() ? totals.min() : totals.sum() / n;
        int g = clusters.size();
        boolean repeats = false;
        double squares = 0;
        double clusterSquares = 0;
        for (ClusterTotals cluster : clusters) {
            repeats |= cluster.count() > 1;
            double off = cluster.mean() - mean;
            squares += cluster.squares() + cluster.count() * (off * off);
            // The cluster's residual sum S_g = sum over g of (x_i - m) = count * (mean_g - m).
            double residualSum = cluster.count() * off;
            clusterSquares += residualSum * residualSum;
        }
        double se;
        double effectiveN;
        if (repeats) {
            se = g < 2 ? Double.NaN : Math.sqrt((double) g / (g - 1) * clusterSquares) / n;
            effectiveN = effectiveN(n, g, clusterSquares, squares);
        } else {
            se = n < 2 ? Double.NaN : Math.sqrt(squares / (n - 1) / n);
            effectiveN = n;
        }
        double[] ci = Wilson.interval(mean, effectiveN, Z_95);
        return new Estimate(n, g, mean, se, ci[0], ci[1], repeats, effectiveN);
    }

    /**
     * n / deff for clustered samples, deff = clusterSquares / squares taken as at least 1; the
     * number of vignettes when deff is undefined (no spread at all, or a single vignette, whose
     * one residual sum is zero by construction).
     */
    static double effectiveN(int n, int clusters, double clusterSquares, double squares) {
        if (clusters < 2 || squares == 0) {
            return clusters;
        }
        return n / Math.max(clusterSquares / squares, 1.0);
    }

    /**
     * Estimates the mean score separately for each group, for example per model or per suite.
     * Whether a group is clustered is decided within that group alone.
     *
     * @param samples   the scored samples, none null
     * @param groupKeys the group of each sample, parallel to samples; a key may be null, and
     *                  null is then a group of its own
     * @param <K>       the key type; compared with equals/hashCode
     * @return an unmodifiable map with one estimate per distinct key, in order of first
     *         appearance; empty when there are no samples
     * @throws IllegalArgumentException when the two lists differ in size
     * @throws NullPointerException     when a list or a sample is null
     */
    public static <K> Map<K, Estimate> byGroup(List<Sample> samples, List<K> groupKeys) {
        Objects.requireNonNull(samples, "samples");
        Objects.requireNonNull(groupKeys, "groupKeys");
        if (samples.size() != groupKeys.size()) {
            throw new IllegalArgumentException("samples and groupKeys must be parallel, got "
                    + samples.size() + " samples and " + groupKeys.size() + " keys");
        }
        Map<K, List<Sample>> groups = new LinkedHashMap<>();
        for (int i = 0; i < samples.size(); i++) {
            groups.computeIfAbsent(groupKeys.get(i), k -> new ArrayList<>()).add(samples.get(i));
        }
        Map<K, Estimate> estimates = new LinkedHashMap<>();
        for (Map.Entry<K, List<Sample>> group : groups.entrySet()) {
            estimates.put(group.getKey(), of(group.getValue()));
        }
        return Collections.unmodifiableMap(estimates);
    }
}
