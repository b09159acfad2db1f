package dev.panoptes.cli;

import dev.panoptes.console.Durations;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Converts a positive human duration to a {@link Duration}: a whole number with a unit
 * ({@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}) or ISO-8601 ({@code PT5S}). A bare number
 * is refused, since its unit would be a guess. Reusable by any subcommand.
 */
public final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern HUMAN = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

    /**
     * @throws TypeConversionException when the value is not a positive duration
     */
    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * Parses a duration as {@link DurationConverter} describes; usable outside picocli.
     *
     * @throws TypeConversionException when the value is not a positive duration
     */
    public static Duration parse(String value) {
        String text = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        Duration duration;
        Matcher m = HUMAN.matcher(text);
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            duration = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } else if (text.startsWith("p")) {
            try {
                duration = Duration.parse(text.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw malformed(value);
            }
        } else {
            throw malformed(value);
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new TypeConversionException("must be a positive duration, got '" + value + "'");
        }
        return duration;
    }

    /**
     * As {@link DurationConverter}, and {@code 0} (with or without a unit) for none at all: for
     * options where zero means "do not wait", such as {@code --admin-linger}.
     */
    public static final class OrZero implements ITypeConverter<Duration> {
        private static final Pattern ZERO = Pattern.compile("0+\\s*(ms|s|m|h|d)?");

        /** @throws TypeConversionException when the value is neither zero nor a positive duration */
        @Override
        public Duration convert(String value) {
            String text = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
            return ZERO.matcher(text).matches() ? Duration.ZERO : parse(value);
        }
    }

    /** Formats a duration the way this converter reads it back ({@code 500ms}, {@code 5s}, {@code 2m}). */
    public static String format(Duration d) {
        return Durations.format(d);
    }

    private static TypeConversionException malformed(String value) {
        return new TypeConversionException("expected a duration such as 500ms, 5s, 2m, 1h or PT5S, got '" + value
                + "'");
    }
}
