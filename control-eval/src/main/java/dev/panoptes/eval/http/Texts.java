package dev.panoptes.eval.http;

import java.time.Duration;
import java.util.Locale;

/**
 * Formatting helpers for the messages of this package: body excerpts, durations, and the mask
 * secrets print as. Static and stateless: any thread.
 */
final class Texts {
    /** What a secret prints as. */
    static final String MASK = "[REDACTED]";

    private Texts() {
    }

    /** {@code text} on one line, whitespace collapsed, cut to {@code max} characters with "...". */
    static String excerpt(String text, int max) {
        if (text == null || text.isBlank()) {
            return "(empty body)";
        }
        String oneLine = text.strip().replaceAll("\\s+", " ");
        return oneLine.length() <= max ? oneLine : oneLine.substring(0, max) + "...";
    }

    /** "850 ms" below a second, "1.5 s" from there on. */
    static String duration(Duration d) {
        return millis(d.toMillis());
    }

    /** "850 ms" below a second, "1.5 s" from there on. */
    static String millis(long ms) {
        return ms < 1000 ? ms + " ms" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
