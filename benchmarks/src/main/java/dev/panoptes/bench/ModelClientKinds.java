package dev.panoptes.bench;

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
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpMethod;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTP clients the model-client measurement compares, each configured as the worker would use
 * it against one OpenAI-compatible endpoint: keep-alive connections up to the calls in flight,
 * HTTP/1.1, no redirects, a 10 s connect and a 120 s request timeout, the same headers
 * ({@code Accept}, {@code Authorization}, {@code Content-Type}) and the same request body.
 * Each call answers the response body's length, and fails unless the status is 200.
 */
abstract class ModelClientKinds implements AutoCloseable {
    /** The names {@link #named} knows, in the order of the report. */
    static final List<String> NAMES = List.of("jdk-today", "jdk-tuned", "apache", "jetty", "product");

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);
    static final String KEY = "sk-bench-0123456789";
    /** What {@code ChatCompletions} sends for a one-line prompt without parameters. */
    static final byte[] BODY = ("{\"model\":\"bench-model\",\"messages\":[{\"role\":\"user\",\"content\":"
            + "\"What is 2 + 2?\"}],\"stream\":false}").getBytes(StandardCharsets.UTF_8);

    /**
     * Starts one call to {@code endpoint} (the product ignores it: it calls the base URL it was
     * built with); completes on the client's own threads with the body's length.
     */
    abstract CompletableFuture<Integer> call(URI endpoint);

    /**
     * True when the calls are made the way {@code HttpModelClient} made them before Apache:
     * blocking a caller thread per call in flight (the worker's job threads), rather than
     * chained from the completion of the previous call.
     */
    boolean blocking() {
        return false;
    }

    /** One blocking call, for {@link #blocking()} kinds. */
    int callBlocking(URI endpoint) throws Exception {
        return call(endpoint).get();
    }

    /** A human name for the report. */
    abstract String describe();

    @Override
    public abstract void close();

    /** The client of a name of {@link #NAMES}, for calls to {@code endpoint}'s server. */
    static ModelClientKinds named(String name, URI baseUrl, int maxConnections) throws Exception {
        switch (name) {
            case "jdk-today":
                return new JdkToday();
            case "jdk-tuned":
                return new JdkTuned();
            case "apache":
                return new Apache(maxConnections);
            case "jetty":
                return new Jetty(maxConnections);
            case "product":
                return new Product(baseUrl, maxConnections);
            default:
                throw new IllegalArgumentException("unknown client '" + name + "': use one of " + NAMES);
        }
    }

    private static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * java.net.http exactly as {@code HttpModelClient} used it before Apache HttpClient (commit
     * 5af774d): default executor, {@code sendAsync} with a String body handler, and the caller's
     * thread blocked in {@code get(timeout)}.
     */
    static final class JdkToday extends ModelClientKinds {
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
            return http.sendAsync(request(endpoint), BodyHandlers.ofString()).thenApply(r -> {
                check(r.statusCode());
                return r.body().length();
            });
        }

        @Override
        int callBlocking(URI endpoint) throws Exception {
            var future = http.sendAsync(request(endpoint), BodyHandlers.ofString());
            try {
                var r = future.get(REQUEST_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
                check(r.statusCode());
                return r.body().length();
            } catch (TimeoutException | InterruptedException e) {
                future.cancel(true);
                throw e;
            }
        }

        private static HttpRequest request(URI endpoint) {
            return HttpRequest.newBuilder(endpoint).timeout(REQUEST_TIMEOUT)
                    .header("Accept", "application/json")
                    .header("Authorization", "Bearer " + KEY)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(BODY))
                    .build();
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

    /**
     * java.net.http tuned: HTTP/1.1, its own two-thread executor, a byte-array body handler,
     * calls chained from completions instead of blocking threads.
     */
    static final class JdkTuned extends ModelClientKinds {
        private final ExecutorService executor = Executors.newFixedThreadPool(2, daemons("jdk-tuned"));
        private final HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .executor(executor)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();

        @Override
        CompletableFuture<Integer> call(URI endpoint) {
            HttpRequest request = HttpRequest.newBuilder(endpoint).timeout(REQUEST_TIMEOUT)
                    .header("Accept", "application/json")
                    .header("Authorization", "Bearer " + KEY)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(BODY))
                    .build();
            return http.sendAsync(request, BodyHandlers.ofByteArray()).thenApply(r -> {
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

    /** Apache HttpClient 5 async, with its defaults for I/O threads (one per core). */
    static final class Apache extends ModelClientKinds {
        private final CloseableHttpAsyncClient http;

        Apache(int maxConnections) {
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

    /** Jetty 12's HttpClient, with its default thread pool. */
    static final class Jetty extends ModelClientKinds {
        private final org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();

        Jetty(int maxConnections) throws Exception {
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

    /**
     * The product's own client, {@code HttpModelClient.completeAsync}: Apache HttpClient plus the
     * JSON of the request and the response, the retry policy and the per-attempt timer.
     */
    static final class Product extends ModelClientKinds {
        private final int maxConnections;
        private final dev.panoptes.eval.ModelRequest request = new dev.panoptes.eval.ModelRequest("What is 2 + 2?",
                dev.panoptes.control.SpecParams.NONE);
        /** The client of the endpoint called last; a worker has one, for one endpoint. */
        private volatile dev.panoptes.eval.http.HttpModelClient client;

        Product(URI baseUrl, int maxConnections) {
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

    private static void check(int status) {
        if (status != 200) {
            throw new IllegalStateException("HTTP " + status);
        }
    }

    /** Unwraps a failed call's cause for a message. */
    static Throwable cause(Throwable t) {
        return t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException
                ? t.getCause() : t;
    }
}
