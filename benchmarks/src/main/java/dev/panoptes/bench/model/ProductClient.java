package dev.panoptes.bench.model;

import java.net.URI;
import java.util.concurrent.CompletableFuture;

/**
 * The product's own client, {@code HttpModelClient.completeAsync}: Apache HttpClient plus the
 * JSON of the request and the response, the retry policy and the per-attempt timer.
 */
final class ProductClient extends ModelClientKinds {
    private final int maxConnections;
    private final dev.panoptes.eval.ModelRequest request = new dev.panoptes.eval.ModelRequest("What is 2 + 2?",
            dev.panoptes.control.SpecParams.NONE);
    /** The client of the endpoint called last; a worker has one, for one endpoint. */
    private volatile dev.panoptes.eval.http.HttpModelClient client;

    ProductClient(URI baseUrl, int maxConnections) {
        this.maxConnections = maxConnections;
        this.client = build(baseUrl);
    }

    private dev.panoptes.eval.http.HttpModelClient build(URI baseUrl) {
        return dev.panoptes.eval.http.HttpModelClient.builder(baseUrl, "bench-model")
                .apiKey(KEY)
                .maxConnections(maxConnections)
                .build();
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        dev.panoptes.eval.http.HttpModelClient c = client;
        if (!c.endpoint().equals(endpoint)) {
            // A batch against the other server: only between batches, on the driving thread.
            synchronized (this) {
                c = client;
                if (!c.endpoint().equals(endpoint)) {
                    c.close();
                    String base = endpoint.toString();
                    c = build(URI.create(base.substring(0, base.length() - "/chat/completions".length())));
                    client = c;
                }
            }
        }
        return c.completeAsync(request).thenApply(r -> r.text().length());
    }

    @Override
    String describe() {
        return "HttpModelClient.completeAsync (the product: Apache HttpClient, JSON both ways, retry timer)";
    }

    @Override
    public void close() {
        client.close();
    }
}
