package dev.panoptes.control.stats;

/**
 * Running totals of the samples of one cluster (one vignette's answers over its epochs): their
 * count, sum, mean and sum of squared deviations about that mean (Welford's update, so nothing
 * cancels). All {@link Accuracy} needs of a cluster: a mean's clustered standard error and
 * design effect follow from these and the overall mean, without the samples themselves.
 *
 * <p>Open for extension so that a caller keeping more per vignette (a run's summary keeps
 * pass@k counts beside them) holds one object per vignette, not two. Not thread-safe: one
 * thread adds, then reads.
 */
public class ClusterTotals {
    private int count;
    private double sum;
    private double mean;
    private double squares;

    /** Adds one sample's value (finite: the caller checks, as {@link Sample} does). */
    public void add(double value) {
        count++;
        sum += value;
        double before = value - mean;
        mean += before / count;
        squares += before * (value - mean);
    }

    /**
     * Totals with these values, as {@link #count()}, {@link #sum()}, {@link #mean()} and
     * {@link #squares()} give them: for a tally that keeps its clusters' totals elsewhere (in
     * arrays) and needs one as an object.
     */
    public static ClusterTotals of(int count, double sum, double mean, double squares) {
        ClusterTotals t = new ClusterTotals();
        t.count = count;
        t.sum = sum;
        t.mean = mean;
        t.squares = squares;
        return t;
    }

    /** Makes these totals a copy of {@code other}'s. */
    public void copyFrom(ClusterTotals other) {
        count = other.count;
        sum = other.sum;
        mean = other.mean;
        squares = other.squares;
    }

    /** Samples added. */
    public int count() {
        return count;
    }

    /** Their sum, in the order added. */
    public double sum() {
        return sum;
    }

    /** Their mean (Welford's running mean: exactly the value when all values are equal); 0 when none. */
    public double mean() {
        return mean;
    }

    /** Sum of squared deviations about {@link #mean()}; exactly 0 when all values are equal. */
    public double squares() {
        return squares;
    }
}
