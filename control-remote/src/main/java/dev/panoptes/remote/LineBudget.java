package dev.panoptes.remote;

import java.util.concurrent.atomic.AtomicLong;

/**
 * At most one log line per interval for one kind of event that a hostile or broken peer can
 * repeat at will (failed TLS handshakes, say), however many loops report it: the first in an
 * interval is logged, the rest are counted, and the next line says how many were not. Lines must
 * not become the flood the connection caps stop.
 *
 * <p>Thread-safe: any selector thread may ask.
 */
final class LineBudget {
    private final long intervalNanos;
    private final AtomicLong nextLineAtNanos = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong unlogged = new AtomicLong();

    LineBudget(long intervalMs) {
        this.intervalNanos = intervalMs * 1_000_000L;
    }

    /**
     * @return -1 when this event must not be logged (it was counted); otherwise the number of
     *         events not logged since the last line, for this line to mention
     */
    long tryLine() {
        long now = System.nanoTime();
        long next = nextLineAtNanos.get();
        if ((next == Long.MIN_VALUE || now - next >= 0) && nextLineAtNanos.compareAndSet(next, now + intervalNanos)) {
            return unlogged.getAndSet(0);
        }
        unlogged.incrementAndGet();
        return -1;
    }
}
