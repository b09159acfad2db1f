package dev.panoptes.coordinator;

import java.util.ArrayDeque;

/**
 * The progress bar's rate: answers per second over the last {@value #WINDOW_SECONDS} seconds,
 * from a sample of the count at each redraw. A rate since the start would carry the wait for the
 * first workers and every slow spell into the ETA for the whole run; a recent one follows the
 * fleet as it grows and shrinks, and falls to nothing (no ETA) when nothing has come for a window.
 *
 * <p>Owned by the console thread; not thread-safe.
 */
final class RecentRate {
    static final int WINDOW_SECONDS = 20;
    private static final long WINDOW_NANOS = WINDOW_SECONDS * 1_000_000_000L;

    /** Samples oldest first, each {nanos, count}: at most a window's worth, plus the one that opens it. */
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    /** Notes {@code count} at {@code nanos} (increasing) and returns the rate per second; 0 before two samples. */
    double update(long nanos, long count) {
        samples.addLast(new long[] {nanos, count});
        while (samples.size() > 2 && nanos - secondOldest() >= WINDOW_NANOS) {
            samples.pollFirst();
        }
        long[] first = samples.peekFirst();
        long span = nanos - first[0];
        return span > 0 ? Math.max(0, count - first[1]) * 1e9 / span : 0;
    }

    private long secondOldest() {
        var it = samples.iterator();
        it.next();
        return it.next()[0];
    }
}
