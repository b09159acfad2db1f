package dev.panoptes.control.stats;

/**
 * Student's t distribution: the distribution function and its inverse, for the paired
 * comparison's interval and p-value ({@link PairedDifference}) when only a few vignettes are
 * shared, where the normal approximation would be too narrow.
 *
 * <p>The distribution function uses the regularized incomplete beta function,
 * P(|T| &gt; t) = I_{df/(df + t^2)}(df/2, 1/2), evaluated by its continued fraction (Lentz's
 * method, as in Numerical Recipes, 6.4); accurate to about 1e-12. The quantile inverts it by
 * bisection. Stateless and thread-safe.
 */
public final class StudentT {
    private static final int MAX_ITERATIONS = 300;
    private static final double EPSILON = 1e-15;
    private static final double TINY = 1e-300;

    private StudentT() {
    }

    /**
     * The two-sided tail probability P(|T| &ge; |t|) with {@code df} degrees of freedom: the
     * two-sided p-value of a t statistic.
     *
     * @param t  the statistic; an infinite one gives 0
     * @param df degrees of freedom, positive
     * @return the probability in [0, 1]; NaN when t is NaN
     * @throws IllegalArgumentException when df is not positive
     */
    public static double twoSidedP(double t, double df) {
        if (!(df > 0)) {
            throw new IllegalArgumentException("degrees of freedom must be positive, got " + df);
        }
        if (Double.isNaN(t)) {
            return Double.NaN;
        }
        if (Double.isInfinite(t)) {
            return 0.0;
        }
        double x = df / (df + t * t);
        return Math.max(0.0, Math.min(1.0, regularizedBeta(x, df / 2, 0.5)));
    }

    /**
     * The quantile q with P(T &le; q) = {@code probability}, for probability in (0.5, 1): for
     * example 0.975 for a two-sided 95 % interval (12.706 at 1 degree of freedom, 1.960 as df
     * grows).
     *
     * @throws IllegalArgumentException when probability is outside (0.5, 1) or df is not positive
     */
    public static double quantile(double probability, double df) {
        if (!(probability > 0.5 && probability < 1)) {
            throw new IllegalArgumentException("probability must be in (0.5, 1), got " + probability);
        }
        double tail = 2 * (1 - probability);
        double low = 0;
        double high = 1;
        while (twoSidedP(high, df) > tail) {
            high *= 2;
        }
        for (int i = 0; i < 200 && high - low > 1e-13 * Math.max(1, high); i++) {
            double mid = (low + high) / 2;
            if (twoSidedP(mid, df) > tail) {
                low = mid;
            } else {
                high = mid;
            }
        }
        return (low + high) / 2;
    }

    /** I_x(a, b), the regularized incomplete beta function, for x in [0, 1]. */
    static double regularizedBeta(double x, double a, double b) {
        if (x <= 0) {
            return 0.0;
        }
        if (x >= 1) {
            return 1.0;
        }
        double front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
        // The continued fraction converges quickly for x < (a + 1) / (a + b + 2); use the
        // symmetry I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
        if (x < (a + 1) / (a + b + 2)) {
            return front * continuedFraction(x, a, b) / a;
        }
        return 1 - front * continuedFraction(1 - x, b, a) / b;
    }

    private static double continuedFraction(double x, double a, double b) {
        double c = 1;
        double d = 1 - (a + b) * x / (a + 1);
        d = 1 / (Math.abs(d) < TINY ? TINY : d);
        double h = d;
        for (int m = 1; m <= MAX_ITERATIONS; m++) {
            int m2 = 2 * m;
            double even = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
            d = 1 + even * d;
            d = 1 / (Math.abs(d) < TINY ? TINY : d);
            c = 1 + even / c;
            c = Math.abs(c) < TINY ? TINY : c;
            h *= d * c;
            double odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
            d = 1 + odd * d;
            d = 1 / (Math.abs(d) < TINY ? TINY : d);
            c = 1 + odd / c;
            c = Math.abs(c) < TINY ? TINY : c;
            double step = d * c;
            h *= step;
            if (Math.abs(step - 1) < EPSILON) {
                break;
            }
        }
        return h;
    }

    /** ln Gamma(x) for x &gt; 0, by the Lanczos approximation (g = 7, 9 terms), about 1e-15 relative. */
    static double logGamma(double x) {
        if (x < 0.5) {
            // Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
            return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
        }
        double[] g = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7};
        double y = x - 1;
        double sum = g[0];
        for (int i = 1; i < g.length; i++) {
            sum += g[i] / (y + i);
        }
        double t = y + 7.5;
        return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(sum);
    }
}
