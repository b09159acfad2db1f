package dev.panoptes.bench.model;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * java.net.http exactly as {@code HttpModelClient} used it before Apache HttpClient (commit
 * 5af774d): default executor, {@code sendAsync} with a String body handler, and the caller's
 * thread blocked in {@code get(timeout)}.
 */
final class JdkTodayClient extends ModelClientKinds {
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    @Override
    boolean blocking() {
        return true;
    }

    @Override
    CompletableFuture<Integer> call(URI endpoint) {
        return http.sendAsync(jdkRequest(endpoint), BodyHandlers.ofString()).thenApply(r -> {
            check(r.statusCode());
            return r.body().length();
        });
    }

    @Override
    int callBlocking(URI endpoint) throws Exception {
        var future = http.sendAsync(jdkRequest(endpoint), BodyHandlers.ofString());
        try {
            var r = future.get(REQUEST_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
            check(r.statusCode());
            return r.body().length();
        } catch (TimeoutException | InterruptedException e) {
            future.cancel(true);
            throw e;
        }
    }

    @Override
    String describe() {
        return "java.net.http as used today (sendAsync + get on a thread per call in flight)";
    }

    @Override
    public void close() {
        // Java 17's HttpClient has no close: its threads end when it is collected.
    }
}
