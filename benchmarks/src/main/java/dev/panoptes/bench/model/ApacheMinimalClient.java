package dev.panoptes.bench.model;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.async.MinimalHttpAsyncClient;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.http2.config.H2Config;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.Timeout;

import java.net.URI;
import java.util.concurrent.CompletableFuture;

/**
 * Apache HttpClient 5's minimal async client: the same I/O reactor and HTTP/1.1 code as {@link
 * ApacheClient}, without the exec chain (no route planning, proxies, protocol interceptors,
 * retries or redirects), with one I/O thread as the product has, and Apache's LAX pool (where the
 * product's is STRICT).
 */
final class ApacheMinimalClient extends ModelClientKinds {
    private final MinimalHttpAsyncClient http;

    ApacheMinimalClient(int maxConnections) {
        http = HttpAsyncClients.createMinimal(H2Config.DEFAULT, Http1Config.DEFAULT,
                IOReactorConfig.custom().setIoThreadCount(1).setTcpNoDelay(true).build(),
                PoolingAsyncClientConnectionManagerBuilder.create()
                        .setPoolConcurrencyPolicy(PoolConcurrencyPolicy.LAX)
                        .setMaxConnTotal(maxConnections)
                        .setMaxConnPerRoute(maxConnections)
                        .setDefaultTlsConfig(TlsConfig.custom().setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                                .build())
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(Timeout.of(CONNECT_TIMEOUT)).build())
                        .build());
        http.start();
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        return ApacheClient.post(http, endpoint);
    }

    @Override
    String describe() {
        return "Apache HttpClient 5.6 minimal async (no exec chain), 1 I/O thread, LAX pool";
    }

    @Override
    public void close() {
        http.close(CloseMode.IMMEDIATE);
    }
}
