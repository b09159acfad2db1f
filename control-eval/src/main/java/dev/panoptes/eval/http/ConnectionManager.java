package dev.panoptes.eval.http;

import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.nio.AsyncConnectionEndpoint;
import org.apache.hc.core5.concurrent.ComplexFuture;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.URIScheme;
import org.apache.hc.core5.http.config.RegistryBuilder;
import org.apache.hc.core5.http.nio.ssl.TlsStrategy;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.pool.PoolReusePolicy;
import org.apache.hc.core5.reactor.ConnectionInitiator;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

import java.io.IOException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * Apache HttpClient's pool, except that new connections are opened on the timer thread: the
 * JDK resolves the host name by blocking, and opening a connection starts where a call
 * starts, on the caller's thread or an I/O thread, neither of which may block. Once the timer
 * is shut down, a new connection fails at once with an {@link IOException}.
 */
final class ConnectionManager extends PoolingAsyncClientConnectionManager {
    private final ScheduledThreadPoolExecutor opener;

    ConnectionManager(TlsStrategy tls, ScheduledThreadPoolExecutor opener) {
        super(RegistryBuilder.<TlsStrategy>create().register(URIScheme.HTTPS.id, tls).build(),
                PoolConcurrencyPolicy.STRICT, PoolReusePolicy.LIFO, TimeValue.NEG_ONE_MILLISECOND, null, null);
        this.opener = opener;
    }

    @Override
    public Future<AsyncConnectionEndpoint> connect(AsyncConnectionEndpoint endpoint,
                                                   ConnectionInitiator initiator, Timeout connectTimeout,
                                                   Object attachment, HttpContext context,
                                                   FutureCallback<AsyncConnectionEndpoint> callback) {
        ComplexFuture<AsyncConnectionEndpoint> result = new ComplexFuture<>(callback);
        try {
            opener.execute(() -> {
                if (result.isDone()) {
                    return;
                }
                try {
                    result.setDependency(super.connect(endpoint, initiator, connectTimeout, attachment, context,
                            new FutureCallback<>() {
                                @Override
                                public void completed(AsyncConnectionEndpoint connected) {
                                    result.completed(connected);
                                }

                                @Override
                                public void failed(Exception ex) {
                                    result.failed(ex);
                                }

                                @Override
                                public void cancelled() {
                                    result.cancel();
                                }
                            }));
                } catch (RuntimeException e) {
                    result.failed(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.failed(new IOException("the model client is closed", e));
        }
        return result;
    }
}
