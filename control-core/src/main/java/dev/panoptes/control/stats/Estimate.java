package dev.panoptes.control.stats;

import java.util.Locale;

/**
 * A mean score with its uncertainty, as computed by {@link Accuracy}.
 *
 * <p>{@code standardError} is {@link Double#NaN} when the spread cannot be estimated: fewer than
 * two samples, or (clustered) fewer than two clusters. The interval is the 95 % Wilson score
 * interval with the clustered effective sample size ({@link Accuracy}), defined from one sample
 * on; it always lies in [0, 1] and contains the mean. It is NaN only for the empty estimate.
 *
 * <p>Immutable and thread-safe.
 *
 * @param n             number of samples, at least 0
 * @param clusters      number of distinct clusters (vignettes), between 0 and n
 * @param mean          the mean score; NaN when n is 0
 * @param standardError the standard error of the mean; NaN when undefined
 * @param ciLow         lower end of the 95 % interval; NaN when n is 0
 * @param ciHigh        upper end of the 95 % interval; NaN when n is 0
 * @param clustered     true when some cluster holds more than one sample, so the standard
 *                      error is cluster-robust rather than the ordinary one
 * @param effectiveN    the sample size the interval was computed with: n without repeats, n
 *                      over the design effect with them (see {@link Accuracy}); NaN when n is 0
 *                      or when the estimate was built without one
 */
public record Estimate(int n, int clusters, double mean, double standardError,
                       double ciLow, double ciHigh, boolean clustered, double effectiveN) {
    private static final Estimate EMPTY =
            new Estimate(0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, false, Double.NaN);

    /**
     * @throws IllegalArgumentException when n is negative or clusters is outside [0, n]
     */
    public Estimate {
        if (n < 0 || clusters < 0 || clusters > n) {
            throw new IllegalArgumentException(
                    "need 0 <= clusters <= n, got n=" + n + ", clusters=" + clusters);
        }
    }

    /** An estimate whose effective sample size is not known (NaN), as before it was recorded. */
    public Estimate(int n, int clusters, double mean, double standardError, double ciLow, double ciHigh,
                    boolean clustered) {
        this(n, clusters, mean, standardError, ciLow, ciHigh, clustered, Double.NaN);
    }

    /** The estimate of no samples at all: n = 0, every number NaN. */
    public static Estimate empty() {
        return EMPTY;
    }

    /** True when the interval is defined: there is at least one sample. */
    public boolean hasInterval() {
        return !Double.isNaN(ciLow);
    }

    /** True when the standard error is defined: two samples, or two clusters when clustered. */
    public boolean hasStandardError() {
        return !Double.isNaN(standardError);
    }

    /**
     * A one-line, locale-independent rendering with three decimals, for reports and logs; the
     * interval's method ({@value Accuracy#METHOD}) is named by whoever prints a list of them:
     * <ul>
     *   <li>{@code 0.750 (95% CI 0.301-0.954, SE 0.250, n=4)}</li>
     *   <li>{@code 0.500 (95% CI 0.170-0.830, SE 0.204, n=8, 4 clusters)} (clustered)</li>
     *   <li>{@code 1.000 (95% CI 0.207-1.000, n=1)} (no standard error)</li>
     *   <li>{@code no scored samples} when n is 0</li>
     * </ul>
     * The cluster count is shown only for clustered estimates; for unclustered ones it equals n.
     */
    public String format() {
        if (n == 0) {
            return "no scored samples";
        }
        String size = sampleSize(n, clusters, clustered);
        String se = hasStandardError() ? "SE " + decimal(standardError) + ", " : "";
        return decimal(mean) + " (95% CI " + decimal(ciLow) + "-" + decimal(ciHigh) + ", " + se + size + ")";
    }

    /** How a formatted figure names its sample: {@code n=8}, with {@code , 4 clusters} when clustered. */
    static String sampleSize(int n, int clusters, boolean clustered) {
        return "n=" + n + (clustered ? ", " + clusters + (clusters == 1 ? " cluster" : " clusters") : "");
    }

    /** Root locale so a German or French JVM does not print "0,750" into shared reports. */
    private static String decimal(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }
}
