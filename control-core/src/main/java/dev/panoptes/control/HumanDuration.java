package dev.panoptes.control;

import java.time.Duration;
import java.util.Locale;

/**
 * A duration as a person reads it in a message: {@code "850 ms"}, {@code "1.5 s"}, {@code "42 s"},
 * {@code "5 min"}, {@code "2 min 30 s"}, {@code "1 h 5 min"}. Precise below a minute (to the
 * millisecond below a second, to a tenth of a second below ten seconds), to the second below an
 * hour, to the minute from there. Not for values a user types back (the command line's form is
 * {@code 5m}): for what a message says happened or how long a limit is. Stateless; any thread.
 */
public final class HumanDuration {
    private HumanDuration() {
    }

    /**
     * The duration in the largest units that say it to the precision above.
     *
     * @param d a duration; negative ones are written as zero
     * @throws NullPointerException when {@code d} is null
     */
    public static String of(Duration d) {
        long ms = Math.max(0, d.toMillis());
        if (ms < 1000) {
            return ms + " ms";
        }
        if (ms < 10_000) {
            String s = String.format(Locale.ROOT, "%.1f", ms / 1000.0);
            return (s.endsWith(".0") ? s.substring(0, s.length() - 2) : s) + " s";
        }
        long seconds = Math.round(ms / 1000.0);
        if (seconds < 60) {
            return seconds + " s";
        }
        if (seconds < 3600) {
            long s = seconds % 60;
            return seconds / 60 + " min" + (s == 0 ? "" : " " + s + " s");
        }
        long minutes = Math.round(seconds / 60.0);
        long m = minutes % 60;
        return minutes / 60 + " h" + (m == 0 ? "" : " " + m + " min");
    }
}
