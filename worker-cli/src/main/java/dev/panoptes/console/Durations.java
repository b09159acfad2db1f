package dev.panoptes.console;

import java.time.Duration;

/**
 * Writes a duration the way the command line reads it back ({@code 500ms}, {@code 5s}, {@code 2m}),
 * for every console and log line of the binary that names one, whichever side of the network says
 * it. Stateless; any thread.
 */
public final class Durations {
    private Durations() {
    }

    /** {@code 2m}, {@code 5s} or {@code 500ms}: the largest unit that shows {@code d} exactly, to the millisecond. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms > 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0 && ms > 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
