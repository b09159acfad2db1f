package dev.panoptes.control.stats;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * How much one model scored above another on the vignettes both answered, clustered by
 * vignette: each vignette contributes one difference d_v (the one model's mean score over its
 * epochs of v minus the other's), so repeated epochs of a vignette count once, not as
 * independent evidence.
 * <pre>
 *   difference = mean of d_v over the V shared vignettes
 *   SE         = sd(d_v) / sqrt(V)              (sd with the V - 1 denominator)
 *   95 % CI    = difference &plusmn; t(0.975, V - 1) * SE
 *   p          = P(|T| &ge; |difference / SE|), T ~ Student t with V - 1 degrees of freedom
 * </pre>
 * This is the paired t test over vignettes. The interval is clipped to [-1, 1], the range of a
 * difference of two scores in [0, 1], since with few vignettes t's quantile is large (12.7 for
 * two). Pairing removes the variation between easy and hard
 * vignettes that both models share, so the SE is usually far smaller than that of the two
 * accuracies taken apart. When every d_v is the same (SE 0) the interval is that value and p is 1
 * if it is 0, else 0. With fewer than two vignettes there is no spread: SE, interval and p are NaN.
 *
 * <p>Immutable and thread-safe.
 *
 * @param vignettes     V, the shared vignettes
 * @param difference    mean of d_v; NaN when V is 0
 * @param standardError sd(d_v) / sqrt(V); NaN when V &lt; 2
 * @param ciLow         lower end of the 95 % interval; NaN when V &lt; 2
 * @param ciHigh        upper end of the 95 % interval; NaN when V &lt; 2
 * @param pValue        two-sided p-value of "no difference"; NaN when V &lt; 2
 */
public record PairedDifference(int vignettes, double difference, double standardError, double ciLow,
                               double ciHigh, double pValue) {
    /** The method, as reports name it once. */
    public static final String METHOD = "paired t over vignettes (each vignette's mean over its epochs)";

    /**
     * The paired difference of per-vignette differences.
     *
     * @param differences d_v, one per shared vignette, each finite
     * @throws NullPointerException     when the list or an element is null
     * @throws IllegalArgumentException when a difference is not finite
     */
    public static PairedDifference of(List<Double> differences) {
        Objects.requireNonNull(differences, "differences");
        int v = differences.size();
        double sum = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < v; i++) {
            double d = Objects.requireNonNull(differences.get(i), "differences[" + i + "]");
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("difference " + i + " is not finite: " + d);
            }
            sum += d;
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        if (v == 0) {
            return new PairedDifference(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        double mean = min == max ? min : sum / v;
        if (v < 2) {
            return new PairedDifference(v, mean, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        double squares = 0;
        for (double d : differences) {
            squares += (d - mean) * (d - mean);
        }
        double se = Math.sqrt(squares / (v - 1)) / Math.sqrt(v);
        if (se == 0) {
            return new PairedDifference(v, mean, 0.0, mean, mean, mean == 0 ? 1.0 : 0.0);
        }
        double half = StudentT.quantile(0.975, v - 1) * se;
        return new PairedDifference(v, mean, se, Math.max(-1.0, mean - half), Math.min(1.0, mean + half),
                StudentT.twoSidedP(mean / se, v - 1));
    }

    /** How {@link #meanOf} combines groups, as reports name it once. */
    public static final String MEAN_METHOD = "unweighted mean over groups, SE sqrt(sum SE^2)/k, Student's t with"
            + " Welch-Satterthwaite degrees of freedom";

    /**
     * The unweighted mean of several groups' paired differences (for example the tasks of an
     * lm-eval group), each group counting once whatever its size: the paired counterpart of
     * {@link GroupMean}, and the difference of lm-eval's group aggregate with
     * {@code weight_by_size: false}. The groups hold disjoint vignettes, so they are independent:
     * <pre>
     *   difference = (sum of the groups' differences) / k
     *   SE         = sqrt(sum of SE_g^2) / k
     *   df         = (sum SE_g^2)^2 / sum(SE_g^4 / (V_g - 1))     (Welch-Satterthwaite)
     *   95 % CI    = difference &plusmn; t(0.975, df) * SE, clipped to [-1, 1]
     *   p          = P(|T| &ge; |difference / SE|), T ~ Student t with df degrees of freedom
     * </pre>
     * With one group this is that group's own paired t. When every group's SE is 0 the interval
     * is the difference and p is 1 if it is 0, else 0, as in {@link #of}. When a group has fewer
     * than two vignettes there is no spread to combine: SE, interval and p are NaN.
     * {@link #vignettes()} is the groups' vignettes added up.
     *
     * @param groups the groups' paired differences; those with no vignette are left out
     * @return the mean over the groups with vignettes; with none, that of no vignette (NaN)
     * @throws NullPointerException when the collection or an element is null
     */
    public static PairedDifference meanOf(Collection<PairedDifference> groups) {
        Objects.requireNonNull(groups, "groups");
        int k = 0;
        int vignettes = 0;
        double sum = 0;
        double variance = 0;
        double dfDenominator = 0;
        boolean spread = true;
        for (PairedDifference g : groups) {
            Objects.requireNonNull(g, "group");
            if (g.vignettes == 0) {
                continue;
            }
            k++;
            vignettes += g.vignettes;
            sum += g.difference;
            if (!g.hasInterval()) {
                spread = false;
                continue;
            }
            double s2 = g.standardError * g.standardError;
            variance += s2;
            dfDenominator += s2 * s2 / (g.vignettes - 1);
        }
        if (k == 0) {
            return of(List.of());
        }
        double mean = sum / k;
        if (!spread) {
            return new PairedDifference(vignettes, mean, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        double se = Math.sqrt(variance) / k;
        if (se == 0) {
            return new PairedDifference(vignettes, mean, 0.0, mean, mean, mean == 0 ? 1.0 : 0.0);
        }
        double df = variance * variance / dfDenominator;
        double half = StudentT.quantile(0.975, df) * se;
        return new PairedDifference(vignettes, mean, se, Math.max(-1.0, mean - half), Math.min(1.0, mean + half),
                StudentT.twoSidedP(mean / se, df));
    }

    /** True when the standard error, interval and p-value are defined. */
    public boolean hasInterval() {
        return !Double.isNaN(standardError);
    }

    /**
     * "+0.250, 95% CI -0.120 to +0.620, SE 0.180, p=0.172, 12 vignettes" ({@code "p<0.001"} below that);
     * locale-independent.
     */
    public String format() {
        if (vignettes == 0) {
            return "no shared vignettes";
        }
        String size = vignettes + (vignettes == 1 ? " vignette" : " vignettes");
        if (!hasInterval()) {
            return signed(difference) + " (" + size + ", no interval)";
        }
        return signed(difference) + ", 95% CI " + signed(ciLow) + " to " + signed(ciHigh) + ", SE "
                + String.format(Locale.ROOT, "%.3f", standardError) + ", p" + (pValue < 0.001 ? "" : "=") + p(pValue)
                + ", " + size;
    }

    /** A p-value with three significant places, and {@code "<0.001"} below that. */
    public static String p(double p) {
        if (Double.isNaN(p)) {
            return "n/a";
        }
        return p < 0.001 ? "<0.001" : String.format(Locale.ROOT, "%.3f", p);
    }

    private static String signed(double value) {
        String text = String.format(Locale.ROOT, "%+.3f", value);
        return text.equals("+0.000") || text.equals("-0.000") ? "0.000" : text;
    }
}
