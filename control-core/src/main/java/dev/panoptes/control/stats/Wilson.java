package dev.panoptes.control.stats;

/**
 * The Wilson score interval for a proportion: the set of true proportions p for which the
 * observed one would not be rejected by a two-sided score test at the given z. Unlike the
 * normal-approximation (Wald) interval p &plusmn; z sqrt(p(1 - p)/n), it never has zero width at
 * 0 or 1 (7 right out of 7 gives [0.646, 1] at 95 %, not [1, 1]) and never leaves [0, 1].
 * <pre>
 *   centre     = (p + z^2 / (2n)) / (1 + z^2 / n)
 *   half width = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
 * </pre>
 * {@code n} may be an effective sample size (any positive real), as {@link Accuracy} passes for
 * clustered samples. Stateless and thread-safe.
 */
public final class Wilson {
    private Wilson() {
    }

    /**
     * The interval for observed proportion {@code p} out of {@code n}.
     *
     * @param p the observed proportion; clamped to [0, 1] (a mean score is expected there)
     * @param n the (effective) sample size; must be positive and finite
     * @param z the normal quantile, 1.96 for 95 %; must be positive and finite
     * @return {low, high}, with 0 &le; low &le; p &le; high &le; 1
     * @throws IllegalArgumentException when p is NaN or n or z is not positive and finite
     */
    public static double[] interval(double p, double n, double z) {
        if (Double.isNaN(p) || !(n > 0) || !Double.isFinite(n) || !(z > 0) || !Double.isFinite(z)) {
            throw new IllegalArgumentException("Wilson interval needs a proportion and a positive, finite n and z;"
                    + " got p=" + p + ", n=" + n + ", z=" + z);
        }
        double q = Math.max(0.0, Math.min(1.0, p));
        double z2 = z * z;
        double denominator = 1 + z2 / n;
        double centre = (q + z2 / (2 * n)) / denominator;
        double half = z / denominator * Math.sqrt(q * (1 - q) / n + z2 / (4 * n * n));
        // At q = 0 (or 1) the lower (upper) end is 0 (1) exactly in exact arithmetic; rounding
        // must neither leave it a hair off nor push the interval past the estimate.
        double low = q == 0 ? 0.0 : Math.max(0.0, Math.min(q, centre - half));
        double high = q == 1 ? 1.0 : Math.min(1.0, Math.max(q, centre + half));
        return new double[] {low, high};
    }
}
