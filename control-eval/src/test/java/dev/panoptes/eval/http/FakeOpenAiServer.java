package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests: it answers a request with the
 * {@link #on(String, String, Reply) reply routed} to its method and path when there is one, else
 * with the next queued {@link Reply} (then with the {@link #otherwise(Reply) fallback} reply, then
 * with a 418 saying the script ran out), and records every request it received, headers and body,
 * with the time it arrived. It answers up to {@value #THREADS} requests at once, on threads it
 * starts when it starts.
 */
final class FakeOpenAiServer implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    /** Requests the server handles at once. */
    static final int THREADS = 64;

    private final HttpServer server;
    /**
     * A fixed pool, started whole at once, so that the server starts no thread while a test
     * counts the threads the client starts.
     */
    private final ThreadPoolExecutor executor = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "fake-openai");
                t.setDaemon(true);
                return t;
            });
    static {
        // The JDK's HttpServer leaves Nagle's algorithm on unless told, and each small answer then
        // waited for the client's delayed ACK: 40 ms a call, seconds per test class. It reads the
        // property once, when its first server is made, so it is set before that.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
    private volatile Reply fallback;
    /** Released when the server closes: what a {@link Reply#hang()} reply waits for. */
    private final java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);
    private final Map<String, Reply> routes = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();

    FakeOpenAiServer() {
        this(null);
    }

    /** A server speaking https with {@code tls}'s certificate, or plain http when it is null. */
    FakeOpenAiServer(SSLContext tls) {
        try {
            InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
            if (tls == null) {
                server = HttpServer.create(loopback, 0);
            } else {
                HttpsServer https = HttpsServer.create(loopback, 0);
                https.setHttpsConfigurator(new HttpsConfigurator(tls));
                server = https;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", this::handle);
        executor.prestartAllCoreThreads();
        server.setExecutor(executor);
        server.start();
    }

    /** {@code http://127.0.0.1:port/v1} (or https), the base URL a client is given. */
    URI baseUrl() {
        return baseUrl("127.0.0.1");
    }

    /** The base URL with another name for this host, such as {@code localhost}. */
    URI baseUrl(String host) {
        String scheme = server instanceof HttpsServer ? "https" : "http";
        return URI.create(scheme + "://" + host + ":" + server.getAddress().getPort() + "/v1");
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** Queues replies, answered in order. */
    FakeOpenAiServer enqueue(Reply... replies) {
        script.addAll(List.of(replies));
        return this;
    }

    /**
     * The reply to every request with this method and path (such as {@code GET /v1/models}),
     * ahead of the queue, which such requests leave alone.
     */
    FakeOpenAiServer on(String method, String path, Reply reply) {
        routes.put(method + " " + path, reply);
        return this;
    }

    /** The reply once the queue is empty, for every request after that. */
    FakeOpenAiServer otherwise(Reply reply) {
        this.fallback = reply;
        return this;
    }

    /** Every request received so far, in order of arrival. */
    List<Recorded> requests() {
        return List.copyOf(requests);
    }

    int requestCount() {
        return requests.size();
    }

    /** The single request received; fails when there were none or several. */
    Recorded onlyRequest() {
        if (requests.size() != 1) {
            throw new AssertionError("expected exactly one request, got " + requests.size());
        }
        return requests.get(0);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            exchange.getRequestHeaders().forEach((k, v) -> headers.put(k, List.copyOf(v)));
            requests.add(new Recorded(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                    Collections.unmodifiableMap(headers), new String(body, StandardCharsets.UTF_8),
                    System.nanoTime(), exchange.getRemoteAddress().getPort(), exchange.getRequestURI()));
            Reply reply = routes.get(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
            if (reply == null) {
                reply = script.poll();
            }
            if (reply == null) {
                reply = fallback;
            }
            if (reply == null) {
                reply = Reply.status(418, "{\"error\":{\"message\":\"fake server: no scripted reply left\"}}");
            }
            if (reply.hang) {
                try {
                    closing.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            reply.headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            if (!reply.headers.containsKey("Content-Type")) {
                exchange.getResponseHeaders().add("Content-Type", "application/json");
            }
            byte[] bytes = reply.body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(reply.status, bytes.length == 0 ? -1 : bytes.length);
            OutputStream out = exchange.getResponseBody();
            if (reply.cutAfter >= 0) {
                // Promise the whole body, send part of it, drop the connection.
                out.write(bytes, 0, Math.min(reply.cutAfter, bytes.length));
                out.flush();
                throw new IOException("fake server: cutting the response short on purpose");
            }
            out.write(bytes);
        } finally {
            exchange.close();
        }
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
    }

    /**
     * One request as the server received it.
     *
     * @param receivedNanos {@link System#nanoTime()} when it arrived
     * @param clientPort    the client's port: the same for requests sent over one connection
     * @param target        the request target as sent: absolute ({@code http://host/...}) when
     *                      sent to a proxy, else the path
     */
    record Recorded(String method, String path, Map<String, List<String>> headers, String body, long receivedNanos,
                    int clientPort, URI target) {
        /** The first value of a header (case-insensitive), or null. */
        String header(String name) {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A scripted answer. */
    static final class Reply {
        final int status;
        final String body;
        final Map<String, String> headers = new LinkedHashMap<>();
        int cutAfter = -1;
        boolean hang;

        private Reply(int status, String body) {
            this.status = status;
            this.body = body;
        }

        /** Any status and body (JSON content type unless a header says otherwise). */
        static Reply status(int status, String body) {
            return new Reply(status, body);
        }

        /** 200 with a chat completion in OpenAI's shape. */
        static Reply completion(String model, String content, String finishReason, Integer promptTokens,
                                Integer completionTokens) {
            return new Reply(200, completionJson(model, content, finishReason, promptTokens, completionTokens));
        }

        /** 200 with a completion from "fake-model": "stop", 10 prompt and 5 completion tokens. */
        static Reply ok(String content) {
            return completion("fake-model", content, "stop", 10, 5);
        }

        /** 200 with an OpenAI model list, {@code {"object":"list","data":[{"id":...,"object":"model"}]}}. */
        static Reply models(String... ids) {
            ObjectNode root = JSON.createObjectNode();
            root.put("object", "list");
            var data = root.putArray("data");
            for (String id : ids) {
                data.addObject().put("id", id).put("object", "model").put("created", 1_700_000_000L)
                        .put("owned_by", "fake");
            }
            return new Reply(200, root.toString());
        }

        /** An OpenAI error envelope: {@code {"error":{"message","type","param":null,"code"}}}. */
        static Reply openAiError(int status, String message, String type, String code) {
            ObjectNode root = JSON.createObjectNode();
            ObjectNode error = root.putObject("error");
            error.put("message", message);
            error.put("type", type);
            error.putNull("param");
            error.put("code", code);
            return new Reply(status, root.toString());
        }

        Reply header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        /** Never answers: the request is held until the server closes. */
        Reply hang() {
            this.hang = true;
            return this;
        }

        /** Sends only the first {@code bytes} bytes of the body, then drops the connection. */
        Reply cutAfter(int bytes) {
            this.cutAfter = bytes;
            return this;
        }
    }

    /** A chat completion exactly as OpenAI sends it, with a few fields clients must ignore. */
    static String completionJson(String model, String content, String finishReason, Integer promptTokens,
                                 Integer completionTokens) {
        ObjectNode root = JSON.createObjectNode();
        root.put("id", "chatcmpl-abc123");
        root.put("object", "chat.completion");
        root.put("created", 1_700_000_000L);
        root.put("model", model);
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        message.put("content", content);
        message.putNull("refusal");
        message.putArray("annotations");
        choice.putNull("logprobs");
        choice.put("finish_reason", finishReason);
        if (promptTokens != null || completionTokens != null) {
            ObjectNode usage = root.putObject("usage");
            usage.put("prompt_tokens", promptTokens);
            usage.put("completion_tokens", completionTokens);
            usage.put("total_tokens", (promptTokens == null ? 0 : promptTokens)
                    + (completionTokens == null ? 0 : completionTokens));
            usage.putObject("prompt_tokens_details").put("cached_tokens", 0);
        }
        root.put("service_tier", "default");
        root.put("system_fingerprint", "fp_fake");
        return root.toString();
    }

    /** The prompts of the requests received, in order (the last message of each). */
    List<String> prompts() {
        List<String> prompts = new ArrayList<>();
        for (Recorded r : requests) {
            JsonNode messages = r.json().get("messages");
            prompts.add(messages.get(messages.size() - 1).get("content").asText());
        }
        return prompts;
    }
}
