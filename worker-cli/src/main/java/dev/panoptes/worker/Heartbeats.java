package dev.panoptes.worker;

import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

/**
 * The clocks of a worker's connection: when to send a {@code heartbeat}, when to give the
 * coordinator up for dead, and how long to linger for its close after our drain.
 *
 * <p><b>Threads.</b> The session's I/O thread alone, but for {@link #lingerMs()}, which any thread
 * may read (it comes from the options alone).
 *
 * <p><b>Promises.</b> A heartbeat goes out when nothing has been sent for the interval, unless
 * bytes still wait to go out (they say we live once they arrive). Silence from the coordinator for
 * the timeout ends the session with a {@link SocketTimeoutException}, unless it has ended its
 * stream already. After registration the interval is never longer than the coordinator's, and the
 * timeout never shorter than {@link WorkerOptions#HEARTBEAT_TIMEOUT_FACTOR} of its intervals.
 */
final class Heartbeats {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);
    /** The longest a drained session waits for the coordinator to close its side. */
    static final long MAX_LINGER_MS = 2000;

    private final String workerId;
    private final String coordinator;
    private final SessionTransport transport;
    private final long lingerMs;
    private long heartbeatIntervalMs;
    private long readTimeoutMs;
    private long lastSentNanos;
    private long lingerUntilNanos;

    Heartbeats(String workerId, String coordinator, WorkerOptions options, SessionTransport transport) {
        this.workerId = workerId;
        this.coordinator = coordinator;
        this.transport = transport;
        this.heartbeatIntervalMs = Math.max(1, options.heartbeatInterval().toMillis());
        this.readTimeoutMs = Math.max(1, options.heartbeatTimeout().toMillis());
        this.lingerMs = Math.max(100, Math.min(MAX_LINGER_MS, options.heartbeatInterval().toMillis()));
    }

    /** Something was sent at {@code now}: the next heartbeat is due an interval later. */
    void sent(long now) {
        lastSentNanos = now;
    }

    /**
     * Throws when the coordinator has been silent too long; sends a heartbeat when one is due.
     *
     * @throws SocketTimeoutException when nothing arrived for the heartbeat timeout
     */
    void check(long now) throws IOException {
        long silentMs = TimeUnit.NANOSECONDS.toMillis(now - transport.lastReceivedNanos());
        if (silentMs >= readTimeoutMs && !transport.endOfStream()) {
            throw new SocketTimeoutException("nothing received from coordinator " + coordinator + " for " + readTimeoutMs
                    + "ms (the heartbeat timeout); treating the connection as dead");
        }
        if (!transport.outputShut() && TimeUnit.NANOSECONDS.toMillis(now - lastSentNanos) >= heartbeatIntervalMs) {
            // Bytes still waiting to go out say we live once they arrive; no heartbeat behind them.
            if (transport.nothingQueued()) {
                transport.send(new Message.Heartbeat(workerId));
            }
            lastSentNanos = now;
        }
    }

    /** How long the I/O thread may sleep from {@code now}: until a heartbeat, the timeout or the linger's end. */
    long selectTimeoutMs(long now) {
        long next = transport.lastReceivedNanos() + TimeUnit.MILLISECONDS.toNanos(readTimeoutMs);
        if (!transport.outputShut()) {
            next = Math.min(next, lastSentNanos + TimeUnit.MILLISECONDS.toNanos(heartbeatIntervalMs));
        } else {
            next = Math.min(next, lingerUntilNanos);
        }
        long deadline = Math.max(next, now);
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - now));
    }

    /**
     * Keeps liveness working with a coordinator tuned differently from us: beats at least as often
     * as it does, and waits at least three of its intervals before declaring it dead.
     */
    void matchCoordinator(long coordinatorHeartbeatMs) {
        if (coordinatorHeartbeatMs <= 0) {
            return;
        }
        if (coordinatorHeartbeatMs < heartbeatIntervalMs) {
            log.debug("worker={} - heartbeating every {}ms to match coordinator {}", workerId,
                    coordinatorHeartbeatMs, coordinator);
            heartbeatIntervalMs = coordinatorHeartbeatMs;
        }
        long coordinatorTimeoutMs = coordinatorHeartbeatMs * WorkerOptions.HEARTBEAT_TIMEOUT_FACTOR;
        if (coordinatorTimeoutMs > readTimeoutMs) {
            readTimeoutMs = coordinatorTimeoutMs;
            log.debug("worker={} - waiting up to {}ms for frames from coordinator {}", workerId, readTimeoutMs,
                    coordinator);
        }
    }

    /** How long a drained session waits for the coordinator to close its side. Any thread. */
    long lingerMs() {
        return lingerMs;
    }

    /** Our output is shut at {@code now}: the linger starts. */
    void startLinger(long now) {
        lingerUntilNanos = now + TimeUnit.MILLISECONDS.toNanos(lingerMs);
    }

    /** True once the linger that {@link #startLinger} started is over. */
    boolean lingerOver(long now) {
        return now - lingerUntilNanos >= 0;
    }
}
