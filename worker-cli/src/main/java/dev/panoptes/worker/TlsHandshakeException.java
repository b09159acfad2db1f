package dev.panoptes.worker;

import java.io.IOException;

/**
 * The TLS handshake with the coordinator failed: it does not trust the worker's certificate,
 * or the worker does not trust the coordinator's (an unknown CA, another host name, expired).
 * Only an operator can fix it, but possibly on the coordinator's side (a certificate rotated),
 * so the reconnect loop keeps retrying with its backoff, logging this message each time.
 */
public final class TlsHandshakeException extends IOException {
    private final String reason;

    /**
     * @param coordinator the coordinator's {@code host:port}
     * @param reason      the TLS layer's reason, in its words
     */
    public TlsHandshakeException(String coordinator, String reason, Throwable cause) {
        this("TLS handshake with coordinator " + coordinator + " failed: " + reason
                + "; check --tls-ca / the coordinator's certificate", reason, cause, true);
    }

    private TlsHandshakeException(String message, String reason, Throwable cause, boolean whole) { // whole: the message is complete, advice included
        super(message, cause);
        this.reason = reason;
    }

    /**
     * The coordinator answered the TLS handshake in plaintext: it serves without TLS. Retried
     * like any handshake failure (the coordinator may be restarted with TLS).
     */
    static TlsHandshakeException plaintextCoordinator(String coordinator, Throwable cause) {
        String reason = "the coordinator answered in plaintext, it does not speak TLS";
        return new TlsHandshakeException("TLS handshake with coordinator " + coordinator + " failed: " + reason
                + "; start the worker without --tls, or the coordinator with --tls-cert and --tls-key", reason, cause, true);
    }

    /** The TLS layer's reason, without advice. */
    public String reason() {
        return reason;
    }
}
