package dev.panoptes.report;

import java.util.Map;
import java.util.TreeMap;

/**
 * Latencies counted by value, for their nearest-rank percentiles without holding one number per
 * answer: a fixed table of counts per millisecond below {@value #TABLE_MS} ms (256 KB, allocated
 * at the first latency), and a sorted map of counts for any other value. Exact: a percentile is
 * always one of the latencies counted, the one a sorted list of them would give.
 *
 * <p>Not thread-safe: one thread adds, then asks.
 */
public final class LatencyCounts {
    /** Latencies below this many milliseconds are counted in the table. */
    static final int TABLE_MS = 65_536;

    private int[] table;
    private final TreeMap<Long, Integer> others = new TreeMap<>();
    private long n;

    /** Counts one latency, in milliseconds. */
    public void add(long latencyMs) {
        n++;
        if (latencyMs >= 0 && latencyMs < TABLE_MS) {
            if (table == null) {
                table = new int[TABLE_MS];
            }
            table[(int) latencyMs]++;
        } else {
            others.merge(latencyMs, 1, Integer::sum);
        }
    }

    /** Latencies counted. */
    public long count() {
        return n;
    }

    /**
     * The nearest-rank percentile: the smallest latency with at least {@code percentile} % of
     * them at or below it, the value at rank ceil(p / 100 * n) (1-based, at least 1) in sorted
     * order; null when none was counted.
     *
     * @param percentile 0 to 100
     */
    public Long nearestRank(int percentile) {
        if (n == 0) {
            return null;
        }
        long rank = Math.min(n, Math.max(1, (long) Math.ceil(percentile / 100.0 * n)));
        long seen = 0;
        // Negative values (a clock's step, never a real call) sort first, then the table, then the rest.
        for (Map.Entry<Long, Integer> e : others.headMap(0L, false).entrySet()) {
            seen += e.getValue();
            if (seen >= rank) {
                return e.getKey();
            }
        }
        if (table != null) {
            for (int ms = 0; ms < TABLE_MS; ms++) {
                seen += table[ms];
                if (seen >= rank) {
                    return (long) ms;
                }
            }
        }
        for (Map.Entry<Long, Integer> e : others.tailMap(0L, true).entrySet()) {
            seen += e.getValue();
            if (seen >= rank) {
                return e.getKey();
            }
        }
        throw new IllegalStateException("rank " + rank + " beyond the " + n + " latencies counted");
    }
}
