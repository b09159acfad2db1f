package dev.panoptes.eval.http;

import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.nio.ssl.TlsStrategy;
import org.apache.hc.core5.net.NamedEndpoint;
import org.apache.hc.core5.reactor.ssl.TransportSecurityLayer;
import org.apache.hc.core5.util.Timeout;

import java.net.SocketAddress;
import java.util.function.Supplier;

/**
 * A {@link TlsStrategy} built the first time a connection needs TLS, or when asked. Building the
 * JVM's default TLS context (its trust store, its providers) costs about 130 ms of CPU, which a
 * worker whose model API is plain http on loopback or a private network, the common case, never
 * needs to pay; a client of an https API builds it at once, so that a broken trust store fails
 * at start, not on every call.
 * Thread-safe: the strategy is built once, by whichever I/O thread gets there first.
 */
final class LazyTlsStrategy implements TlsStrategy {
    private final Supplier<TlsStrategy> build;
    private volatile TlsStrategy built;

    LazyTlsStrategy(Supplier<TlsStrategy> build) {
        this.build = build;
    }

    /** Builds the strategy now, if not yet built; throws what building it throws. */
    TlsStrategy strategy() {
        TlsStrategy s = built;
        if (s == null) {
            synchronized (this) {
                s = built;
                if (s == null) {
                    s = build.get();
                    built = s;
                }
            }
        }
        return s;
    }

    /** Whether the strategy has been built: for tests. */
    boolean built() {
        return built != null;
    }

    @Override
    @SuppressWarnings("deprecation")
    public boolean upgrade(TransportSecurityLayer sessionLayer, HttpHost host, SocketAddress localAddress,
                           SocketAddress remoteAddress, Object attachment, Timeout handshakeTimeout) {
        return strategy().upgrade(sessionLayer, host, localAddress, remoteAddress, attachment, handshakeTimeout);
    }

    @Override
    public void upgrade(TransportSecurityLayer sessionLayer, NamedEndpoint endpoint, Object attachment,
                        Timeout handshakeTimeout, FutureCallback<TransportSecurityLayer> callback) {
        strategy().upgrade(sessionLayer, endpoint, attachment, handshakeTimeout, callback);
    }
}
