package dev.panoptes.report;

import dev.panoptes.control.cost.Money;

import java.util.Locale;

/**
 * How every report prints the numbers {@link RunStats} computes, so that the text summary, the
 * CSV and JSON exports and the HTML report show the same figure as the same string.
 *
 * <p>Locale-independent ({@link Locale#ROOT}): a German JVM must not write "0,733" into a CSV
 * file that a script then parses. Stateless and thread-safe.
 */
public final class Figures {
    /** What a number that does not exist (NaN: no samples, no spread) prints as. */
    public static final String NOT_AVAILABLE = "n/a";

    private Figures() {
    }

    /**
     * A mean, standard error or interval end with three decimals: {@code 0.733}.
     *
     * @return the figure, or {@value #NOT_AVAILABLE} for NaN or infinity
     */
    public static String ratio(double value) {
        if (!Double.isFinite(value)) {
            return NOT_AVAILABLE;
        }
        return positiveZero(String.format(Locale.ROOT, "%.3f", value));
    }

    /**
     * A difference between two means, always signed so the direction is never in doubt:
     * {@code +0.067}, {@code -0.100}, {@code 0.000}.
     *
     * @return the figure, or {@value #NOT_AVAILABLE} for NaN or infinity
     */
    public static String difference(double value) {
        if (!Double.isFinite(value)) {
            return NOT_AVAILABLE;
        }
        String text = positiveZero(String.format(Locale.ROOT, "%+.3f", value));
        return text.equals("+0.000") ? "0.000" : text;
    }

    /**
     * One sample's grade: like {@link #ratio}, and empty for an unscored sample (null), since
     * "unscored" is not a missing number but no number at all.
     */
    public static String score(Double score) {
        return score == null ? "" : ratio(score);
    }

    /** A latency in whole milliseconds: {@code 1250}, or {@value #NOT_AVAILABLE} when null. */
    public static String millis(Long millis) {
        return millis == null ? NOT_AVAILABLE : Long.toString(millis);
    }

    /** A count, without grouping separators so that exports stay machine-readable: {@code 12345}. */
    public static String count(long count) {
        return Long.toString(count);
    }

    /**
     * An amount of US dollars as {@link Money#text} prints it: four decimals ({@code 0.0123}), two
     * significant digits for an amount too small for them ({@code 0.0000021}), or
     * {@value #NOT_AVAILABLE} for NaN or infinity.
     */
    public static String usd(double amount) {
        if (!Double.isFinite(amount)) {
            return NOT_AVAILABLE;
        }
        return Money.text(amount);
    }

    /**
     * A value in [0, 1] as a CSS percentage with one decimal, for bar widths: {@code 73.3%}.
     * Clamped to [0, 1]; NaN is 0 %.
     */
    static String percent(double value) {
        double clamped = Double.isFinite(value) ? Math.max(0.0, Math.min(1.0, value)) : 0.0;
        return String.format(Locale.ROOT, "%.1f%%", clamped * 100.0);
    }

    /** "-0.000" is what a tiny negative rounds to; it reads like a sign error, so drop the sign. */
    private static String positiveZero(String text) {
        return text.matches("-0\\.0+") ? text.substring(1) : text;
    }
}
