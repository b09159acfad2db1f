package dev.panoptes.control.cost;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Amounts of US dollars as decimals, the one place that turns a cost into what is printed or
 * exported. Costs are reckoned in {@code double} (tokens times a price per million), and a
 * {@code double} written as it is shows binary noise: 10 tokens at 0.15 plus 1 at 0.60 per million
 * is {@code 2.1000000000000002E-6}. {@link #of} rounds that noise away, keeping
 * {@value #SIGNIFICANT_DIGITS} significant digits (far beyond what any price is given with, and
 * short of the 15 to 17 where a double's error lies), so that an export says {@code 0.0000021}.
 *
 * <ul>
 *   <li>{@link #of}: the amount as a {@link BigDecimal}, for JSON numbers;</li>
 *   <li>{@link #plain}: the same as text without an exponent, for CSV cells and JSON written by
 *       hand ({@code 0.0000021}, {@code 12.5}, {@code 0});</li>
 *   <li>{@link #text}: for people, with four decimals ({@code 0.4400}); an amount too small to
 *       show in four decimals is shown with two significant digits ({@code 0.0000021}) rather
 *       than as a misleading {@code 0.0000}.</li>
 * </ul>
 *
 * Stateless; any thread.
 */
public final class Money {
    /** The significant digits an amount keeps. */
    public static final int SIGNIFICANT_DIGITS = 12;
    private static final MathContext ROUNDING = new MathContext(SIGNIFICANT_DIGITS, RoundingMode.HALF_EVEN);
    /** Below this (and above zero), {@link #text} shows significant digits rather than four decimals. */
    private static final BigDecimal SMALLEST_IN_FOUR_DECIMALS = new BigDecimal("0.0001");

    private Money() {
    }

    /**
     * The amount as a decimal: rounded to {@value #SIGNIFICANT_DIGITS} significant digits, trailing
     * zeros dropped ({@code 0} for zero, negative zero included).
     *
     * @throws IllegalArgumentException when the amount is NaN or infinite, which no cost is
     */
    public static BigDecimal of(double usd) {
        if (!Double.isFinite(usd)) {
            throw new IllegalArgumentException("an amount of USD must be a finite number, got " + usd);
        }
        if (usd == 0) {
            return BigDecimal.ZERO;
        }
        BigDecimal d = new BigDecimal(usd).round(ROUNDING).stripTrailingZeros();
        // stripTrailingZeros leaves 100 as 1E+2: a scale below 0 is written with an exponent.
        return d.scale() < 0 ? d.setScale(0) : d;
    }

    /** {@link #of} as text without an exponent: {@code 0.0000021}, {@code 12.5}, {@code 0}. */
    public static String plain(double usd) {
        return of(usd).toPlainString();
    }

    /**
     * The amount for people, without the unit: four decimals ({@code 0.4400}, {@code 12.0000}),
     * or, for an amount that is not zero and would show as {@code 0.0000}, two significant digits
     * ({@code 0.0000021}). NaN or infinite: {@code n/a}.
     */
    public static String text(double usd) {
        if (!Double.isFinite(usd)) {
            return "n/a";
        }
        BigDecimal d = of(usd);
        if (d.signum() != 0 && d.abs().compareTo(SMALLEST_IN_FOUR_DECIMALS) < 0) {
            return d.round(new MathContext(2, RoundingMode.HALF_EVEN)).stripTrailingZeros().toPlainString();
        }
        return d.setScale(4, RoundingMode.HALF_EVEN).toPlainString();
    }
}
