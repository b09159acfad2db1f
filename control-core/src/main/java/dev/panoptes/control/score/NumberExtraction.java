package dev.panoptes.control.score;

import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the number a model's answer ends on.
 *
 * <p>Reads, in order of preference within one token: a simple fraction {@code a/b}; a decimal
 * with thousands separators ({@code 1,234,567.5}, commas only in groups of three); a plain
 * decimal ({@code 12}, {@code 3.0}, {@code .5}) with an optional exponent ({@code 1e3}). A sign
 * ({@code -}, {@code +} or the Unicode minus) and one currency symbol may come first, in either
 * order ({@code -$5}, {@code $-5}); anything after the digits (units, %, a full stop) is
 * ignored, so "45%" reads 45 and "12 km" reads 12.
 *
 * <p>A number does not start inside a word or right after a digit or decimal point: "H2O"
 * and "COVID-19" do not read 2 or -19 (the latter reads 19), and "5-3" reads 5 then 3, not -3.
 *
 * <p>Stateless and thread-safe.
 */
final class NumberExtraction {
    private static final Pattern NUMBER = Pattern.compile(
            "(?<![A-Za-z\\p{N}_.])"
                    + "(?:(?<sign>[-+\u2212])\\p{Sc}?|\\p{Sc}\\s?(?<currencySign>[-+\u2212])?)?"
                    + "(?:(?<numerator>\\d+)/(?<denominator>\\d+)"
                    + "|(?<mantissa>\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:\\.\\d+)?|\\.\\d+)"
                    + "(?<exponent>[eE][-+]?\\d+)?)");

    private NumberExtraction() {
    }

    /** The value of the last number in the text, or empty when it holds none. */
    static OptionalDouble lastNumber(String text) {
        Matcher matcher = NUMBER.matcher(text);
        OptionalDouble last = OptionalDouble.empty();
        while (matcher.find()) {
            OptionalDouble value = valueOf(matcher);
            if (value.isPresent()) {
                last = value;
            }
        }
        return last;
    }

    private static OptionalDouble valueOf(Matcher matcher) {
        double magnitude;
        if (matcher.group("numerator") != null) {
            double denominator = Double.parseDouble(matcher.group("denominator"));
            if (denominator == 0) {
                return OptionalDouble.empty();
            }
            magnitude = Double.parseDouble(matcher.group("numerator")) / denominator;
        } else {
            String exponent = matcher.group("exponent");
            magnitude = Double.parseDouble(matcher.group("mantissa").replace(",", "")
                    + (exponent == null ? "" : exponent));
        }
        if (!Double.isFinite(magnitude)) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(isNegative(matcher.group("sign")) || isNegative(matcher.group("currencySign"))
                ? -magnitude : magnitude);
    }

    private static boolean isNegative(String sign) {
        return sign != null && !sign.equals("+");
    }

    /** A number as a person would write it: 12 rather than 12.0, 1.0E-6 kept as Java prints it. */
    static String format(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return Double.toString(value);
    }
}
