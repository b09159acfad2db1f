package dev.panoptes.worker;

import dev.panoptes.control.Redaction;
import dev.panoptes.control.wire.MessageCodec;


import javax.net.ssl.SSLContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The knobs of a worker's connection to its coordinator, with the defaults PROTOCOL.md names.
 * Immutable; tests shrink the timings through the {@code with...} methods.
 *
 * @param token             the coordinator's shared secret, or null when it has none; never
 *                          printed by {@link #toString()}
 * @param heartbeatInterval how often the worker sends {@code heartbeat} (default 5 s)
 * @param heartbeatTimeout  how long the worker waits for any frame from the coordinator before it
 *                          treats the connection as dead (default 3 x the interval)
 * @param connectTimeout    how long one TCP connect may take (default 10 s)
 * @param initialBackoff    the first pause between two connection attempts (default 500 ms)
 * @param maxBackoff        the cap of the exponential backoff (default 30 s)
 * @param labels            informational labels sent with {@code register}; never null
 * @param models            the models the worker's API serves, sent with {@code register}; a
 *                          coordinator sends it only jobs that ask for one of them (or for none);
 *                          never null
 * @param tls               the TLS context to connect with (docs/PROTOCOL.md, "Transport security"),
 *                          or null for plaintext TCP: it holds the CAs the worker trusts (the JVM's
 *                          default trust store, or {@code --tls-ca}) and, for mutual TLS, the
 *                          worker's certificate. The coordinator's certificate is checked for the
 *                          host name the worker was given, as an HTTPS client checks it. A handshake
 *                          that fails (unknown CA, wrong host, expired) ends the session with a
 *                          {@link TlsHandshakeException}, and the worker retries with its backoff
 *                          like after any failed connection: the coordinator's certificate may be
 *                          fixed or rotated on its side without touching its workers
 * @param maxFrameBytes     the largest frame the worker accepts and sends (default 16 MiB, as
 *                          PROTOCOL.md says); it sends no frame above the coordinator's own limit
 *                          either, once the coordinator has said it at registration
 */
public record WorkerOptions(String token, Duration heartbeatInterval, Duration heartbeatTimeout,
                            Duration connectTimeout, Duration initialBackoff, Duration maxBackoff,
                            Map<String, String> labels, List<String> models, SSLContext tls, int maxFrameBytes) {
    /** PROTOCOL.md's default heartbeat interval. */
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(5);
    /** PROTOCOL.md's heartbeat timeout, as a multiple of the interval. */
    public static final int HEARTBEAT_TIMEOUT_FACTOR = 3;
    /** The smallest frame limit that makes sense: PROTOCOL.md's handshake limit, 64 KiB. */
    public static final int MIN_FRAME_BYTES = 64 * 1024;

    /**
     * @throws NullPointerException     when a duration is missing
     * @throws IllegalArgumentException when a duration is not positive, the timeout is not longer
     *                                  than the interval, or the backoff cap is below its start
     */
    public WorkerOptions {
        positive(heartbeatInterval, "heartbeatInterval");
        positive(heartbeatTimeout, "heartbeatTimeout");
        positive(connectTimeout, "connectTimeout");
        positive(initialBackoff, "initialBackoff");
        positive(maxBackoff, "maxBackoff");
        if (heartbeatTimeout.compareTo(heartbeatInterval) <= 0) {
            throw new IllegalArgumentException("heartbeatTimeout (" + heartbeatTimeout.toMillis()
                    + "ms) must be longer than heartbeatInterval (" + heartbeatInterval.toMillis() + "ms)");
        }
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff (" + maxBackoff.toMillis()
                    + "ms) must not be below initialBackoff (" + initialBackoff.toMillis() + "ms)");
        }
        if (maxFrameBytes < MIN_FRAME_BYTES) {
            throw new IllegalArgumentException("maxFrameBytes must be at least " + MIN_FRAME_BYTES + " (64 KiB), got "
                    + maxFrameBytes);
        }
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        models = models == null ? List.of() : List.copyOf(models);
    }

    /** No token, the protocol's default heartbeat, a 10 s connect timeout, backoff 500 ms to 30 s. */
    public static WorkerOptions defaults() {
        return new WorkerOptions(null, DEFAULT_HEARTBEAT, DEFAULT_HEARTBEAT.multipliedBy(HEARTBEAT_TIMEOUT_FACTOR),
                Duration.ofSeconds(10), Duration.ofMillis(500), Duration.ofSeconds(30), Map.of(), List.of(), null,
                MessageCodec.DEFAULT_MAX_FRAME_BYTES);
    }

    /** These options with another token (null for none). */
    public WorkerOptions withToken(String newToken) {
        return new WorkerOptions(newToken, heartbeatInterval, heartbeatTimeout, connectTimeout, initialBackoff,
                maxBackoff, labels, models, tls, maxFrameBytes);
    }

    /** These options with another heartbeat interval, and the timeout reset to 3 x that interval. */
    public WorkerOptions withHeartbeat(Duration interval) {
        positive(interval, "heartbeatInterval");
        return new WorkerOptions(token, interval, interval.multipliedBy(HEARTBEAT_TIMEOUT_FACTOR), connectTimeout,
                initialBackoff, maxBackoff, labels, models, tls, maxFrameBytes);
    }

    /** These options with another heartbeat timeout; call after {@link #withHeartbeat}. */
    public WorkerOptions withHeartbeatTimeout(Duration timeout) {
        return new WorkerOptions(token, heartbeatInterval, timeout, connectTimeout, initialBackoff, maxBackoff,
                labels, models, tls, maxFrameBytes);
    }

    /** These options with another connect timeout. */
    public WorkerOptions withConnectTimeout(Duration timeout) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, timeout, initialBackoff, maxBackoff,
                labels, models, tls, maxFrameBytes);
    }

    /** These options with another backoff range between connection attempts. */
    public WorkerOptions withBackoff(Duration initial, Duration max) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, connectTimeout, initial, max, labels, models, tls, maxFrameBytes);
    }

    /** These options with other labels for {@code register}. */
    public WorkerOptions withLabels(Map<String, String> newLabels) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, connectTimeout, initialBackoff,
                maxBackoff, newLabels, models, tls, maxFrameBytes);
    }

    /** These options offering other models at {@code register}. */
    public WorkerOptions withModels(List<String> newModels) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, connectTimeout, initialBackoff,
                maxBackoff, labels, newModels, tls, maxFrameBytes);
    }

    /**
     * These options connecting over TLS with this context (null: plaintext). Build it with
     * {@link dev.panoptes.remote.tls.PemFiles#clientContext}.
     */
    public WorkerOptions withTls(SSLContext context) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, connectTimeout, initialBackoff,
                maxBackoff, labels, models, context, maxFrameBytes);
    }

    /**
     * These options with another frame limit (docs/PROTOCOL.md, "Transport and framing").
     *
     * @throws IllegalArgumentException when below {@link #MIN_FRAME_BYTES}
     */
    public WorkerOptions withMaxFrameBytes(int bytes) {
        return new WorkerOptions(token, heartbeatInterval, heartbeatTimeout, connectTimeout, initialBackoff,
                maxBackoff, labels, models, tls, bytes);
    }

    /** Never prints the token, nor credentials in a URL of the labels. */
    @Override
    public String toString() {
        return "WorkerOptions[token=" + (token == null ? "none" : "***")
                + ", heartbeatIntervalMs=" + heartbeatInterval.toMillis()
                + ", heartbeatTimeoutMs=" + heartbeatTimeout.toMillis()
                + ", connectTimeoutMs=" + connectTimeout.toMillis()
                + ", backoffMs=" + initialBackoff.toMillis() + ".." + maxBackoff.toMillis()
                + ", labels=" + Redaction.labels(labels) + ", models=" + models + ", tls=" + (tls == null ? "off" : "on")
                + ", maxFrameBytes=" + maxFrameBytes + "]";
    }

    private static void positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }
}
