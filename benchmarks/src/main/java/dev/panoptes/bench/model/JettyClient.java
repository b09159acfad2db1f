package dev.panoptes.bench.model;

import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpMethod;

import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Jetty 12's HttpClient, with its default thread pool. */
final class JettyClient extends ModelClientKinds {
    private final org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();

    JettyClient(int maxConnections) throws Exception {
        http.setMaxConnectionsPerDestination(maxConnections);
        http.setFollowRedirects(false);
        http.setConnectTimeout(CONNECT_TIMEOUT.toMillis());
        http.start();
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        Request request = http.newRequest(endpoint)
                .method(HttpMethod.POST)
                .headers(h -> h.put("Accept", "application/json").put("Authorization", "Bearer " + KEY))
                .body(new BytesRequestContent("application/json", BODY))
                .timeout(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return new CompletableResponseListener(request, 1 << 20).send().thenApply(r -> {
            check(r.getStatus());
            return r.getContent().length;
        });
    }

    @Override
    String describe() {
        return "Jetty 12.1 HttpClient (default thread pool)";
    }

    @Override
    public void close() {
        try {
            http.stop();
        } catch (Exception e) {
            throw new IllegalStateException("stopping Jetty's HttpClient failed", e);
        }
    }
}
