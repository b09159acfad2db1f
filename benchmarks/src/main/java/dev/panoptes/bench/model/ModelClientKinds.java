package dev.panoptes.bench.model;

import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One of the HTTP clients the model-client measurement compares, by the name {@link #named} knows
 * it by; each kind is a subclass in a file of its own. Each is configured as the worker would use
 * it against one OpenAI-compatible endpoint: keep-alive connections (Apache, Jetty and the product
 * up to {@code --max-connections}; java.net.http has no such limit), HTTP/1.1, no redirects, a
 * 10 s connect and a 120 s request timeout, the same headers ({@code Accept}, {@code
 * Authorization}, {@code Content-Type}) and the same request body. Each call answers the response
 * body's length, and fails unless the status is 200.
 *
 * <p>{@link #call} may be called from any thread, the client's own included (the next call is
 * chained from the completion of the last); {@link #close()} once, after the last call.
 */
public abstract class ModelClientKinds implements AutoCloseable {
    /** The names {@link #named} knows, in the order of the report. */
    public static final List<String> NAMES = List.of("jdk-today", "jdk-tuned", "apache", "apache-minimal", "apache-classic",
            "jetty", "product");

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
                return new JdkTodayClient();
            case "jdk-tuned":
                return new JdkTunedClient();
            case "apache":
                return new ApacheClient(maxConnections);
            case "apache-minimal":
                return new ApacheMinimalClient(maxConnections);
            case "apache-classic":
                return new ApacheClassicClient(maxConnections);
            case "jetty":
                return new JettyClient(maxConnections);
            case "product":
                return new ProductClient(baseUrl, maxConnections);
            default:
                throw new IllegalArgumentException("unknown client '" + name + "': use one of " + NAMES);
        }
    }

    /** Daemon threads named {@code prefix-N}, for a client's own executor. */
    static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Fails a call whose status is not 200. */
    static void check(int status) {
        if (status != 200) {
            throw new IllegalStateException("HTTP " + status);
        }
    }

    /** The request both java.net.http kinds send: the measurement's headers and body. */
    static HttpRequest jdkRequest(URI endpoint) {
        return HttpRequest.newBuilder(endpoint).timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json")
                .header("Authorization", "Bearer " + KEY)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(BODY))
                .build();
    }

    /** Unwraps a failed call's cause for a message. */
    static Throwable cause(Throwable t) {
        return t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException
                ? t.getCause() : t;
    }
}
