package dev.panoptes.bench.harness;

import org.HdrHistogram.Histogram;

/**
 * The latency percentiles a run reports, from an HdrHistogram of nanoseconds (3 significant
 * digits), in microseconds.
 *
 * @param count samples
 * @param p50Us median
 * @param p99Us 99th percentile
 * @param p999Us 99.9th percentile
 * @param maxUs maximum
 */
public record Latency(long count, double p50Us, double p99Us, double p999Us, double maxUs) {
    /** Highest latency tracked: a minute, far beyond anything a healthy run sees. */
    public static final long HIGHEST_TRACKABLE_NANOS = 60_000_000_000L;

    public static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_TRACKABLE_NANOS, 3);
    }

    public static Latency of(Histogram h) {
        return new Latency(h.getTotalCount(), h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                h.getValueAtPercentile(99.9) / 1e3, h.getMaxValue() / 1e3);
    }

    /** The fields of a {@link Kv} reply: count, p50, p99, p999, max. */
    public Object[] kv() {
        return new Object[] {"count", count, "p50", p50Us, "p99", p99Us, "p999", p999Us, "max", maxUs};
    }

    public static Latency from(Kv kv) {
        return new Latency(kv.longValue("count"), kv.doubleValue("p50"), kv.doubleValue("p99"),
                kv.doubleValue("p999"), kv.doubleValue("max"));
    }
}
