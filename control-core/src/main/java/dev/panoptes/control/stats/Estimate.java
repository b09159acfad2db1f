package dev.panoptes.control.stats;

import java.util.Locale;

/**
 * A mean score with its uncertainty, as computed by {@link Accuracy}.
 *
 * <p>{@code standardError}, {@code ciLow} and {@code ciHigh} are {@link Double#NaN} when the
 * spread cannot be estimated: fewer than two samples, or (clustered) fewer than two clusters.
 * The interval is the normal-approximation 95 % interval, clamped to [0, 1] for display.
 *
 * <p>Immutable and thread-safe.
 *
 * @param n             number of samples, at least 0
 * @param clusters      number of distinct clusters (vignettes), between 0 and n
 * @param mean          the mean score; NaN when n is 0
 * @param standardError the standard error of the mean; NaN when undefined
 * @param ciLow         lower end of the 95 % interval; NaN when undefined
 * @param ciHigh        upper end of the 95 % interval; NaN when undefined
 * @param clustered     true when some cluster holds more than one sample, so the standard
 *                      error is cluster-robust rather than the ordinary one
 */
public record Estimate(int n, int clusters, double mean, double standardError,
                       double ciLow, double ciHigh, boolean clustered) {
    private static final Estimate EMPTY =
            new Estimate(0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, false);

    /**
     * @throws IllegalArgumentException when n is negative or clusters is outside [0, n]
     */
    public Estimate {
        if (n < 0 || clusters < 0 || clusters > n) {
            throw new IllegalArgumentException(
                    "need 0 <= clusters <= n, got n=" + n + ", clusters=" + clusters);
        }
    }

    /** The estimate of no samples at all: n = 0, every number NaN. */
    public static Estimate empty() {
        return EMPTY;
    }

    /** True when the standard error, and so the interval, is defined. */
    public boolean hasInterval() {
        return !Double.isNaN(standardError);
    }

    /**
     * A one-line, locale-independent rendering with three decimals, for reports and logs:
     * <ul>
     *   <li>{@code 0.750 ± 0.250 (95% CI 0.260-1.000, n=4)}</li>
     *   <li>{@code 0.500 ± 0.204 (95% CI 0.100-0.900, n=8, 4 clusters)} (clustered)</li>
     *   <li>{@code 1.000 (n=1, no interval)}, {@code 0.667 (n=3, 1 cluster, no interval)}</li>
     *   <li>{@code no scored samples} when n is 0</li>
     * </ul>
     * The cluster count is shown only for clustered estimates; for unclustered ones it equals n.
     */
    public String format() {
        if (n == 0) {
            return "no scored samples";
        }
        String size = "n=" + n + (clustered ? ", " + clusters + (clusters == 1 ? " cluster" : " clusters") : "");
        if (!hasInterval()) {
            return decimal(mean) + " (" + size + ", no interval)";
        }
        return decimal(mean) + " \u00b1 " + decimal(standardError)
                + " (95% CI " + decimal(ciLow) + "-" + decimal(ciHigh) + ", " + size + ")";
    }

    /** Root locale so a German or French JVM does not print "0,750" into shared reports. */
    private static String decimal(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }
}
