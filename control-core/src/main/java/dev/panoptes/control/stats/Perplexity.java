package dev.panoptes.control.stats;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * lm-evaluation-harness's {@code perplexity} of a loglikelihood task, {@code exp(-mean ll)} over
 * the answers' log-likelihoods (its {@code perplexity} aggregation of the per-document
 * {@code ll}), with a 95 % interval ({@value #METHOD}).
 *
 * <p><b>The interval.</b> The mean log-likelihood m has the standard error {@link Accuracy}
 * gives any mean: the ordinary s / sqrt(n) when every vignette was asked once, the
 * cluster-robust one over vignettes when epochs repeat them (a repeat is not a new document).
 * Its interval is Student's t, m &plusmn; t(0.975, df) SE with df = n - 1, or G - 1 for G
 * vignettes when clustered, and perplexity's is that interval mapped through exp(-x), which
 * is monotone: {@code [exp(-(m + t SE)), exp(-(m - t SE))]}. It is not symmetric about the
 * perplexity, as perplexity's spread is not. The perplexity's own standard error is the delta
 * method's, exp(-m) SE; lm-eval bootstraps it instead (100,000 resamples of the documents), which
 * for samples of the usual size comes out the same to within its own resampling noise.
 *
 * <p>Stateless and thread-safe.
 */
public final class Perplexity {
    /** The interval's method, as reports name it. */
    public static final String METHOD = "t interval on the mean log-likelihood, clustered by vignette,"
            + " through exp(-x)";

    private Perplexity() {
    }

    /**
     * The perplexity of answers' log-likelihoods.
     *
     * @param loglikelihoods one sample per answer: its vignette and the log-likelihood of its
     *                       continuation (a natural log, at most 0); may be empty
     * @return the estimate; {@link Figure#EMPTY} when there are no samples
     * @throws NullPointerException when the list or a sample is null
     */
    public static Figure of(List<Sample> loglikelihoods) {
        Objects.requireNonNull(loglikelihoods, "loglikelihoods");
        if (loglikelihoods.isEmpty()) {
            return Figure.EMPTY;
        }
        return of(Accuracy.of(loglikelihoods));
    }

    /**
     * The perplexity of answers whose log-likelihoods' mean {@link Accuracy} estimated (from a
     * list, or one answer at a time by {@link ClusteredMean}, as a run's summary streams them).
     *
     * @param mean the estimate of the mean log-likelihood
     * @return the figure; {@link Figure#EMPTY} when the estimate has no samples
     * @throws NullPointerException when mean is null
     */
    public static Figure of(Estimate mean) {
        Objects.requireNonNull(mean, "mean");
        if (mean.n() == 0) {
            return Figure.EMPTY;
        }
        double m = mean.mean();
        double se = mean.standardError();
        int df = (mean.clustered() ? mean.clusters() : mean.n()) - 1;
        double low = Double.NaN;
        double high = Double.NaN;
        if (mean.hasStandardError() && df >= 1) {
            double half = StudentT.quantile(0.975, df) * se;
            low = Math.exp(-(m + half));
            high = Math.exp(-(m - half));
        }
        double ppl = Math.exp(-m);
        return new Figure(mean.n(), mean.clusters(), mean.clustered(), m, se, ppl,
                mean.hasStandardError() ? ppl * se : Double.NaN, low, high);
    }

    /**
     * A perplexity with its interval.
     *
     * @param n                          answers measured
     * @param clusters                   their distinct vignettes
     * @param clustered                  true when a vignette has more than one answer (epochs), so
     *                                   the standard error is the cluster-robust one
     * @param meanLoglikelihood          the mean log-likelihood m; NaN when n is 0
     * @param loglikelihoodStandardError its standard error; NaN when undefined (one answer, or one
     *                                   vignette when clustered)
     * @param perplexity                 exp(-m)
     * @param standardError              exp(-m) times m's standard error (the delta method); NaN
     *                                   when that is undefined
     * @param ciLow                      the 95 % interval's lower end; NaN when undefined
     * @param ciHigh                     its upper end; NaN when undefined
     */
    public record Figure(int n, int clusters, boolean clustered, double meanLoglikelihood,
                         double loglikelihoodStandardError, double perplexity, double standardError, double ciLow,
                         double ciHigh) {
        /** No answers: n 0, every number NaN. */
        public static final Figure EMPTY = new Figure(0, 0, false, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN);

        /** True when the interval is defined. */
        public boolean hasInterval() {
            return !Double.isNaN(ciLow);
        }

        /** True when the standard error is defined. */
        public boolean hasStandardError() {
            return !Double.isNaN(standardError);
        }

        /**
         * One line, locale-independent: {@code 12.345 (95% CI 9.876-15.432, SE 1.234, mean ll -2.513,
         * n=40)}, with the clusters when clustered, without the interval when it is undefined.
         */
        public String format() {
            if (n == 0) {
                return "no log-likelihoods";
            }
            String size = Estimate.sampleSize(n, clusters, clustered);
            return String.format(Locale.ROOT, "%.3f (", perplexity)
                    + (hasInterval() ? String.format(Locale.ROOT, "95%% CI %.3f-%.3f, ", ciLow, ciHigh) : "")
                    + (hasStandardError() ? String.format(Locale.ROOT, "SE %.3f, ", standardError) : "")
                    + String.format(Locale.ROOT, "mean ll %.4f, ", meanLoglikelihood) + size + ")";
        }
    }
}
