package dev.panoptes.control.stats;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@link Accuracy}'s estimate of a mean, built one sample at a time: what it keeps is a few
 * numbers overall and one {@link ClusterTotals} per cluster (vignette), not the samples, so a
 * run's summary can be computed from answers streamed from the store. {@link Accuracy#of(java.util.List)}
 * is this over a list; both give the same estimate.
 *
 * <p>Not thread-safe: one thread adds, then asks for the estimate (which may be asked for again
 * after more samples).
 */
public final class ClusteredMean {
    private final Totals totals = new Totals();
    private final Map<String, ClusterTotals> clusters = new LinkedHashMap<>();

    /**
     * Adds one sample.
     *
     * @param cluster its cluster (the vignette id)
     * @param value   its value
     * @throws NullPointerException     when cluster is null
     * @throws IllegalArgumentException when value is NaN or infinite
     */
    public void add(String cluster, double value) {
        Objects.requireNonNull(cluster, "sample cluster must not be null");
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("sample value must be finite, got " + value + " (cluster=" + cluster
                    + ")");
        }
        totals.add(value);
        clusters.computeIfAbsent(cluster, k -> new ClusterTotals()).add(value);
    }

    /** Samples added. */
    public int n() {
        return totals.n();
    }

    /** The estimate of the samples added so far; {@link Estimate#empty()} when none. */
    public Estimate estimate() {
        return Accuracy.of(totals, clusters.values());
    }

    /** Per cluster, in order of first sample, its totals; unmodifiable view. */
    public Map<String, ClusterTotals> clusters() {
        return Collections.unmodifiableMap(clusters);
    }

    /**
     * The overall totals of a mean, in the order the samples came: their count, sum, least and
     * greatest value. With the clusters' {@link ClusterTotals} they are all
     * {@link Accuracy#of(Totals, Collection)} needs. Not thread-safe.
     */
    public static final class Totals {
        private int n;
        private double sum;
        private double min = Double.POSITIVE_INFINITY;
        private double max = Double.NEGATIVE_INFINITY;

        /** Adds one sample's value. */
        public void add(double value) {
            n++;
            sum += value;
            min = Math.min(min, value);
            max = Math.max(max, value);
        }

        /** Samples added. */
        public int n() {
            return n;
        }

        /** Their sum, in the order added. */
        public double sum() {
            return sum;
        }

        /** The least value; +infinity when none. */
        public double min() {
            return min;
        }

        /** The greatest value; -infinity when none. */
        public double max() {
            return max;
        }
    }
}
