package dev.panoptes.remote;

/**
 * The clocks of one connection, and the deadlines they set (docs/PROTOCOL.md, "Liveness"):
 * register within the handshake timeout; some byte received within the heartbeat timeout
 * (bytes, not whole frames, so that a large result arriving slowly keeps its sender alive); a
 * heartbeat sent when the worker has heard nothing for an interval; and unsent bytes making
 * progress within the write-stall timeout, so that a worker that heartbeats but stopped reading
 * is still reaped. Times are the loop's clock in milliseconds, given by the caller.
 *
 * <p>Not thread-safe: the connection's selector thread only.
 */
final class Liveness {
    private final long handshakeTimeoutMs;
    private final long heartbeatIntervalMs;
    private final long heartbeatTimeoutMs;
    private final long writeStallTimeoutMs;

    private long acceptedAtMs;
    private long lastReceivedMs;
    private long lastSentMs;
    /** Since when unsent bytes have made no progress, or -1 when nothing waits. */
    private long stalledSinceMs = -1;

    Liveness(ServerContext context) {
        this.handshakeTimeoutMs = context.handshakeTimeoutMs;
        this.heartbeatIntervalMs = context.heartbeatIntervalMs;
        this.heartbeatTimeoutMs = context.heartbeatTimeoutMs;
        this.writeStallTimeoutMs = context.writeStallTimeoutMs;
    }

    void accepted(long nowMs) {
        acceptedAtMs = nowMs;
        lastReceivedMs = nowMs;
        lastSentMs = nowMs;
    }

    /** Some bytes arrived. */
    void received(long nowMs) {
        lastReceivedMs = nowMs;
    }

    /** A frame was queued for the worker: it will hear from us. */
    void sent(long nowMs) {
        lastSentMs = nowMs;
    }

    /**
     * A write attempt wrote {@code written} bytes and left {@code unsentLeft} waiting: the stall
     * clock starts when bytes first wait and restarts whenever some leave.
     */
    void wrote(long nowMs, int written, boolean unsentLeft) {
        if (!unsentLeft) {
            stalledSinceMs = -1;
        } else if (written > 0 || stalledSinceMs < 0) {
            stalledSinceMs = nowMs;
        }
    }

    long acceptedAtMs() {
        return acceptedAtMs;
    }

    long handshakeDeadlineMs() {
        return acceptedAtMs + handshakeTimeoutMs;
    }

    long silentMs(long nowMs) {
        return nowMs - lastReceivedMs;
    }

    boolean isSilent(long nowMs) {
        return silentMs(nowMs) >= heartbeatTimeoutMs;
    }

    /** How long unsent bytes have waited without progress; 0 when none wait. */
    long stalledMs(long nowMs) {
        return stalledSinceMs < 0 ? 0 : nowMs - stalledSinceMs;
    }

    boolean isStalled(long nowMs) {
        return stalledSinceMs >= 0 && stalledMs(nowMs) >= writeStallTimeoutMs;
    }

    boolean isHeartbeatDue(long nowMs) {
        return nowMs - lastSentMs >= heartbeatIntervalMs;
    }

    /** The earliest time one of these clocks needs looking at again. */
    long nextDeadlineMs() {
        long next = Math.min(lastReceivedMs + heartbeatTimeoutMs, lastSentMs + heartbeatIntervalMs);
        return stalledSinceMs < 0 ? next : Math.min(next, stalledSinceMs + writeStallTimeoutMs);
    }
}
