package dev.panoptes.bench.model;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * java.net.http tuned: HTTP/1.1, its own two-thread executor, a byte-array body handler,
 * calls chained from completions instead of blocking threads.
 */
final class JdkTunedClient extends ModelClientKinds {
    private final ExecutorService executor = Executors.newFixedThreadPool(2, daemons("jdk-tuned"));
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(executor)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        return http.sendAsync(jdkRequest(endpoint), BodyHandlers.ofByteArray()).thenApply(r -> {
            check(r.statusCode());
            return r.body().length;
        });
    }

    @Override
    String describe() {
        return "java.net.http tuned (HTTP/1.1, own 2-thread executor, byte[] bodies, async)";
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
