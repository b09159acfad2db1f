package dev.panoptes.bench.model;

import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.Timeout;

import java.net.URI;
import java.util.concurrent.CompletableFuture;

/**
 * Apache HttpClient 5's classic (blocking) client, a caller thread per call in flight blocked in
 * its socket read, as a worker would use it with one thread per slot of its capacity. It measures
 * the HTTP side alone: a worker would also hand each call to such a thread and its answer back to
 * its event loop, two thread wake-ups per call that this does not count.
 */
final class ApacheClassicClient extends ModelClientKinds {
    private final CloseableHttpClient http;

    ApacheClassicClient(int maxConnections) {
        http = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setMaxConnTotal(maxConnections)
                        .setMaxConnPerRoute(maxConnections)
                        .setDefaultSocketConfig(SocketConfig.custom().setTcpNoDelay(true).build())
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(Timeout.of(CONNECT_TIMEOUT))
                                .setSocketTimeout(Timeout.of(REQUEST_TIMEOUT)).build())
                        .build())
                .disableRedirectHandling()
                .disableAutomaticRetries()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableConnectionState()
                .disableContentCompression()
                .build();
    }

    @Override
    boolean blocking() {
        return true;
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        try {
            return CompletableFuture.completedFuture(callBlocking(endpoint));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    int callBlocking(URI endpoint) throws Exception {
        HttpPost post = new HttpPost(endpoint);
        post.addHeader("Accept", "application/json");
        post.addHeader("Authorization", "Bearer " + KEY);
        post.setEntity(new ByteArrayEntity(BODY, ContentType.APPLICATION_JSON));
        return http.execute(post, response -> {
            check(response.getCode());
            return EntityUtils.toByteArray(response.getEntity()).length;
        });
    }

    @Override
    String describe() {
        return "Apache HttpClient 5.6 classic (blocking), a thread per call in flight";
    }

    @Override
    public void close() {
        http.close(CloseMode.IMMEDIATE);
    }
}
