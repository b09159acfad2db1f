package dev.panoptes.coordinator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The live progress bar's text: a pure function from one {@link Snapshot} of the counts and the
 * terminal's width to the line drawn, so that its layout is tested without a terminal.
 *
 * <p>It promises a line shorter than the width (the last column is left free, or a terminal that
 * wraps at the margin would scroll on every redraw), and keeps what matters most when the width
 * runs short: the count and share done always, then rate and ETA, then the bar (only with room for
 * at least {@value #MIN_BAR} cells), then failures, cache hits, cost and workers while they fit.
 * Stateless; any thread.
 */
final class ProgressBar {
    static final int MIN_BAR = 10;
    static final int MAX_BAR = 40;
    /** Rate and ETA: shown before the bar when the width runs short; the other counts after it. */
    private static final int ESSENTIAL_PARTS = 2;

    private ProgressBar() {
    }

    /**
     * The counts at one moment.
     *
     * @param done        answers (or jobs) resolved, stored or failed, including those stored by an earlier run
     * @param total       answers (or jobs) in the run
     * @param unit        what is counted, singular ("answer", "job")
     * @param failed      of {@code done}, those that failed
     * @param cacheHits   answers served from the response cache; negative when there is no cache
     * @param cost        dollars spent so far; NaN when no prices were given
     * @param rate        answers (or jobs) per second lately; 0 when none came
     * @param workers     workers connected
     * @param quarantined of those, quarantined now
     */
    record Snapshot(long done, long total, String unit, long failed, long cacheHits, double cost, double rate,
                    int workers, int quarantined) {

        /** Seconds left at the rate; negative when unknown. */
        double etaSeconds() {
            return rate > 0 && done < total ? (total - done) / rate : -1;
        }
    }

    /** The line for a terminal {@code columns} wide (a width under 1 is taken as 80). */
    static String render(Snapshot s, int columns) {
        int room = (columns > 0 ? columns : 80) - 1;
        double share = s.total() == 0 ? 1.0 : Math.min(1.0, (double) s.done() / s.total());
        String head = s.done() + "/" + s.total() + " " + plural(s.total(), s.unit())
                + String.format(Locale.ROOT, " %3.0f%%", 100 * share);
        List<String> parts = new ArrayList<>();
        parts.add(rate(s.rate()));
        parts.add("ETA " + eta(s.etaSeconds()));
        if (s.failed() > 0) {
            parts.add(s.failed() + " failed");
        }
        if (s.cacheHits() >= 0) {
            parts.add(s.cacheHits() + " cached");
        }
        if (!Double.isNaN(s.cost())) {
            parts.add(cost(s.cost()));
        }
        parts.add(s.workers() + (s.workers() == 1 ? " worker" : " workers")
                + (s.quarantined() > 0 ? " (" + s.quarantined() + " quarantined)" : ""));

        StringBuilder text = new StringBuilder(head);
        int reserved = 0;
        for (int i = 0; i < parts.size(); i++) {
            if (i == ESSENTIAL_PARTS && room - text.length() >= MIN_BAR + 3) {
                reserved = MIN_BAR + 3; // the bar comes before the counts after rate and ETA
            }
            String part = parts.get(i);
            if (text.length() + 2 + part.length() + reserved > room) {
                break;
            }
            text.append("  ").append(part);
        }
        if (text.length() > room) {
            return text.substring(0, Math.max(0, room));
        }
        int cells = Math.min(MAX_BAR, room - text.length() - 3);
        if (cells < MIN_BAR) {
            return text.toString();
        }
        return bar(share, cells) + " " + text;
    }

    /** {@code [#####-----]}: {@code cells} cells between brackets, filled by share, rounded down. */
    static String bar(double share, int cells) {
        int filled = (int) Math.floor(Math.max(0, Math.min(1, share)) * cells);
        return "[" + "#".repeat(filled) + "-".repeat(cells - filled) + "]";
    }

    /** {@code 0.4/s}, {@code 4.2/s}, {@code 42/s}, {@code 4.2k/s}, {@code 42k/s}. */
    static String rate(double perSecond) {
        if (perSecond >= 10_000) {
            return String.format(Locale.ROOT, "%.0fk/s", perSecond / 1000);
        }
        if (perSecond >= 1_000) {
            return String.format(Locale.ROOT, "%.1fk/s", perSecond / 1000);
        }
        return String.format(Locale.ROOT, perSecond >= 10 ? "%.0f/s" : "%.1f/s", perSecond);
    }

    /** {@code 42s}, {@code 3m05s}, {@code 2h03m}; {@code -} when unknown. */
    static String eta(double seconds) {
        if (seconds < 0 || Double.isNaN(seconds) || Double.isInfinite(seconds)) {
            return "-";
        }
        long s = Math.round(seconds);
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
    }

    /** {@code $0.0042}, {@code $0.42}, {@code $12.34}: cents, or four places below a cent. */
    static String cost(double dollars) {
        return String.format(Locale.ROOT, dollars > 0 && dollars < 0.01 ? "$%.4f" : "$%.2f", dollars);
    }

    private static String plural(long n, String unit) {
        return n == 1 ? unit : unit + "s";
    }
}
