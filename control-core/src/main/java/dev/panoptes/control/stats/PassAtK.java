package dev.panoptes.control.stats;

import java.util.Collection;

/**
 * pass@k over epochs: the chance that at least one of k answers to a problem passes, estimated
 * from n answers of which c passed with the unbiased estimator of Chen et al. (2021), "Evaluating
 * Large Language Models Trained on Code", section 2.1:
 * <pre>
 *   pass@k = 1 - C(n - c, k) / C(n, k)    (computed as 1 - prod_{i = n - c + 1}^{n} (1 - k / i))
 * </pre>
 * averaged over the problems. The interval is the 95 % Wilson score interval of that mean with the
 * number of problems as its sample size ({@link #METHOD}): problems, not answers, are the
 * independent units. Stateless and thread-safe.
 */
public final class PassAtK {
    /** How the interval is computed, as summaries name it. */
    public static final String METHOD = "unbiased estimator of Chen et al. (2021), 95% CI: Wilson over problems";

    private PassAtK() {
    }

    /**
     * One problem's pass@k from n answers, c of them passing.
     *
     * @throws IllegalArgumentException unless 0 &le; c &le; n and 1 &le; k &le; n
     */
    public static double of(int n, int c, int k) {
        if (c < 0 || c > n || k < 1 || k > n) {
            throw new IllegalArgumentException("pass@k needs 0 <= c <= n and 1 <= k <= n, got n=" + n + ", c=" + c
                    + ", k=" + k);
        }
        if (n - c < k) {
            return 1.0;
        }
        double fail = 1.0;
        for (int i = n - c + 1; i <= n; i++) {
            fail *= 1.0 - (double) k / i;
        }
        return 1.0 - fail;
    }

    /**
     * The mean pass@k over problems, each given as {n, c}, with its interval; problems with fewer
     * than k answers are left out.
     *
     * @return the estimate, n and clusters its number of problems; {@link Estimate#empty()} when
     *         no problem has k answers
     */
    public static Estimate over(Collection<int[]> problems, int k) {
        double sum = 0;
        double squares = 0;
        int m = 0;
        for (int[] p : problems) {
            if (p[0] < k) {
                continue;
            }
            double v = of(p[0], p[1], k);
            sum += v;
            squares += v * v;
            m++;
        }
        if (m == 0) {
            return Estimate.empty();
        }
        double mean = sum / m;
        double se = m < 2 ? Double.NaN : Math.sqrt(Math.max(0, (squares - m * mean * mean) / (m - 1)) / m);
        double[] ci = Wilson.interval(mean, m, 1.959963984540054);
        return new Estimate(m, m, mean, se, ci[0], ci[1], false, m);
    }
}
