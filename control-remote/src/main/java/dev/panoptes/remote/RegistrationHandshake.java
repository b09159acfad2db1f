package dev.panoptes.remote;

import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.PeerSpeaksTlsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.SocketAddress;

/**
 * The {@code register} handshake of one connection (docs/PROTOCOL.md), from accept until the
 * peer is a worker or is turned away: it checks the first frame, refuses a peer that sends
 * anything else, too late, in the wrong protocol (plaintext to a TLS server and the reverse) or
 * with a failed TLS handshake, and tells the server's listener of every refusal exactly once.
 * Making the worker out of an accepted {@code register} is its {@link ConnectionActor}'s.
 *
 * <p><b>Threads.</b> Not thread-safe: the connection's selector thread only, like the actor.
 *
 * <p><b>Promises.</b> A refusal sends {@code rejected} with the reason where the socket takes it at
 * once (never waiting for an unauthenticated peer), logs one line (TLS handshake failures through
 * the server's line budget), reports it, and closes the connection. Nothing here allocates a job
 * table or a large buffer: a peer that never registers costs the coordinator little.
 */
final class RegistrationHandshake {
    private static final Logger log = LoggerFactory.getLogger(RegistrationHandshake.class);

    private final ConnectionActor owner;
    private final ServerContext context;
    private final ConnectionTransport transport;
    private final SocketAddress remote;
    /** True once the listener was told why this connection never became a worker. */
    private boolean rejectionReported;

    RegistrationHandshake(ConnectionActor owner, ServerContext context, ConnectionTransport transport,
                          SocketAddress remote) {
        this.owner = owner;
        this.context = context;
        this.transport = transport;
        this.remote = remote;
    }

    /**
     * Checks the connection's first frame.
     *
     * @return the registration to accept, or null when the peer was refused (and closed)
     */
    Message.Register check(Message first) {
        if (!(first instanceof Message.Register register)) {
            reject("the first frame must be register, got " + first.type(), null, null, false);
            return null;
        }
        String reason = context.handshake.rejectionReason(register);
        if (reason != null) {
            reject(reason, register.workerId(), null, false);
            return null;
        }
        return register;
    }

    /** Logs the accepted registration, naming a clamped capacity and the TLS session. */
    void logRegistered(Message.Register register, int capacity) {
        if (capacity != register.capacity()) {
            log.info("worker={} job=- - registered from {}{} with capacity {} (it asked for {}; clamped to [1, {}])"
                    + ", models {}, labels {}", register.workerId(), remote, transport.describe(), capacity,
                    register.capacity(), context.options.maxCapacity(), register.models(), register.labels());
        } else {
            log.info("worker={} job=- - registered from {}{} with capacity {}, models {}, labels {}",
                    register.workerId(), remote, transport.describe(), capacity, register.models(),
                    register.labels());
        }
    }

    /** The handshake deadline passed without a registration: refuses the peer. */
    void onTimeout() {
        if (transport.isTlsHandshakePending()) {
            owner.onTlsFailure(new SSLHandshakeException("no TLS handshake completed within the handshake timeout of "
                    + context.handshakeTimeoutMs + " ms (a peer that went silent, or that does not speak TLS)"));
            return;
        }
        reject("no register frame within the handshake timeout of " + context.handshakeTimeoutMs
                + " ms; is this a Panoptes worker, and is it sending register first?", null, null, true);
    }

    /** A frame before registering broke the protocol: refuses the peer (or just closes on a TLS client). */
    void onProtocolError(ProtocolException e) {
        if (e instanceof PeerSpeaksTlsException) {
            // A rejected frame in plaintext would be noise to a TLS client: just close.
            String reason = "the peer speaks TLS but this coordinator serves plaintext: start the coordinator with"
                    + " --tls-cert and --tls-key, or the worker without --tls";
            log.warn("worker=- job=- - closing the connection from {}: {}", remote, reason);
            report(reason);
            owner.close(e);
            return;
        }
        reject("protocol error before registering: " + e.getMessage(), null, e, false);
    }

    /**
     * The TLS handshake failed: one warning through the server's line budget, with advice for the
     * usual causes, and a report. The caller closes.
     */
    void onTlsHandshakeFailure(String reason) {
        long unlogged = context.handshakeFailureLines.tryLine();
        if (unlogged >= 0) {
            String more = unlogged == 0 ? "" : " (" + unlogged + " more failed handshakes in the last interval"
                    + " were not logged)";
            if (reason.contains("overloaded") || transport.peerSentPlaintext()) {
                log.warn("worker=- job=- - TLS handshake with {} failed: {}; closing that connection{}", remote,
                        reason, more);
            } else {
                log.warn("worker=- job=- - TLS handshake with {} failed: {}; closing that connection (is it a"
                        + " worker started with --tls, whose --tls-ca trusts this coordinator's certificate{}?){}",
                        remote, reason, context.options.requireClientCertificate()
                                ? ", with a --tls-cert issued by this coordinator's client CA" : "", more);
            }
        }
        report("TLS handshake failed: " + reason);
    }

    /** The connection closed before registering: reports why, unless a refusal was reported already. */
    void onClosed(Throwable first, long upMs) {
        if (rejectionReported) {
            return;
        }
        String reason = "connection closed before registering: " + JobFailures.describe(first);
        log.info("worker=- job=- - {} from {} after {} ms", reason, remote, upMs);
        report(reason);
    }

    /**
     * Refuses a connection in the handshake: sends {@code rejected} with the reason if the
     * socket takes it now (best effort, never waiting), reports it, then closes.
     *
     * @param retryable whether the same registration may pass later (told to the worker)
     */
    private void reject(String reason, String claimedWorkerId, Throwable cause, boolean retryable) {
        // Info, not warn: the server's listener reports it to whoever runs the coordinator.
        log.info("worker={} job=- - rejected the connection from {}: {}",
                claimedWorkerId == null ? "-" : claimedWorkerId, remote, reason);
        try {
            transport.sendLast(context.encodeFrame(new Message.Rejected(reason, retryable)));
        } catch (IOException | RuntimeException e) {
            log.debug("worker=- job=- - could not send rejected to {}: {}", remote, e.toString());
        }
        report(reason);
        ProtocolException rejection = new ProtocolException("registration from " + remote + " rejected: " + reason);
        if (cause != null) {
            rejection.initCause(cause);
        }
        owner.close(rejection);
    }

    private void report(String reason) {
        rejectionReported = true;
        try {
            context.events.onRejected(remote, reason);
        } catch (RuntimeException e) {
            log.warn("worker=- job=- - the rejection handler failed; carrying on", e);
        }
    }
}
