package dev.panoptes.bench.model;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.nio.entity.AsyncEntityProducers;
import org.apache.hc.core5.http.nio.entity.BasicAsyncEntityConsumer;
import org.apache.hc.core5.http.nio.support.AsyncRequestBuilder;
import org.apache.hc.core5.http.nio.support.BasicResponseConsumer;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.Timeout;

import java.net.URI;
import java.util.concurrent.CompletableFuture;

/** Apache HttpClient 5 async, with its defaults for I/O threads (one per core). */
final class ApacheClient extends ModelClientKinds {
    private final CloseableHttpAsyncClient http;

    ApacheClient(int maxConnections) {
        http = HttpAsyncClients.custom()
                .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                        .setMaxConnTotal(maxConnections)
                        .setMaxConnPerRoute(maxConnections)
                        .setDefaultTlsConfig(TlsConfig.custom().setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                                .build())
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(Timeout.of(CONNECT_TIMEOUT)).build())
                        .build())
                .setIOReactorConfig(IOReactorConfig.custom().setTcpNoDelay(true).build())
                .disableRedirectHandling()
                .disableAutomaticRetries()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableConnectionState()
                .build();
        http.start();
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        return post(http, endpoint);
    }

    /**
     * One call of the benchmark through an Apache async client, the minimal one too: the body
     * read whole, its length the result; a status other than 200 fails it.
     */
    static CompletableFuture<Integer> post(CloseableHttpAsyncClient http, URI endpoint) {
        CompletableFuture<Integer> result = new CompletableFuture<>();
        http.execute(AsyncRequestBuilder.post(endpoint)
                        .addHeader("Accept", "application/json")
                        .addHeader("Authorization", "Bearer " + KEY)
                        .setEntity(AsyncEntityProducers.create(BODY, ContentType.APPLICATION_JSON))
                        .build(),
                new BasicResponseConsumer<>(new BasicAsyncEntityConsumer()),
                new FutureCallback<Message<HttpResponse, byte[]>>() {
                    @Override
                    public void completed(Message<HttpResponse, byte[]> m) {
                        if (m.getHead().getCode() != 200) {
                            result.completeExceptionally(new IllegalStateException("HTTP "
                                    + m.getHead().getCode()));
                        } else {
                            result.complete(m.getBody() == null ? 0 : m.getBody().length);
                        }
                    }

                    @Override
                    public void failed(Exception e) {
                        result.completeExceptionally(e);
                    }

                    @Override
                    public void cancelled() {
                        result.cancel(false);
                    }
                });
        return result;
    }

    @Override
    String describe() {
        return "Apache HttpClient 5.6 async (default I/O threads: one per core)";
    }

    @Override
    public void close() {
        http.close(CloseMode.IMMEDIATE);
    }
}
