package dev.panoptes.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small OpenAI-compatible chat-completions server on loopback, for the demo, the end-to-end
 * tests and the benchmarks: no model, no GPU, deterministic answers.
 *
 * <p>It answers arithmetic questions of the form "What is A + B?" (also -, *), and is wrong
 * on purpose now and then, so that an accuracy figure means something: model
 * {@value #MODEL} (and any other name) for about one prompt in ten, model
 * {@value #SMALL_MODEL} for about one in three and with a full stop after the number
 * (which exact match counts wrong and the normalized scorer forgives). Which prompts are wrong
 * depends only on the prompt, the model and the request's seed, so the same request always gets
 * the same answer and epochs with different seeds differ. Any other prompt is echoed as
 * {@code "re: <prompt>"}. Each call waits the configured latency before answering. Token usage
 * is the number of words in and out.
 *
 * <p>Its context length is {@value #CONTEXT_TOKENS} tokens (words, here): a request whose
 * messages hold more is answered HTTP 400 {@code context_length_exceeded}, in OpenAI's envelope
 * and with vLLM's wording, as a real server answers an over-long prompt. So a test makes one
 * vignette of a suite fail for what it holds by making its prompt long enough.
 *
 * <p>Thread-safe; {@link #close()} stops it.
 */
public final class StubModelServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StubModelServer.class);
    private static final Pattern ARITHMETIC = Pattern.compile("What is (-?\\d+) ([-+*]) (-?\\d+)\\?");
    /** The most prompt tokens (words) a request may hold; more is answered 400 context_length_exceeded. */
    public static final int CONTEXT_TOKENS = 32_768;
    /** The model that is wrong about one prompt in ten; any name it does not know is answered as this one. */
    public static final String MODEL = "stub-arithmetic";
    /** The second model: wrong more often, and it ends its answers with a full stop. */
    public static final String SMALL_MODEL = "stub-arithmetic-small";

    static {
        // The JDK's HttpServer leaves Nagle's algorithm on unless told, and small answers then
        // wait for the client's delayed ACK: about 40 ms added to every call on Linux. It reads
        // the property once, when its first server is made, so it is set before that.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Duration latency;
    private final ObjectMapper mapper = new ObjectMapper();
    private final AtomicLong requests = new AtomicLong();
    /** Requests answered 429 because more than {@link #maxConcurrent} were in flight. */
    private final AtomicLong throttled = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Completions being answered now, and the most there ever were at once. */
    private final AtomicInteger serving = new AtomicInteger();
    private final AtomicInteger peakServing = new AtomicInteger();
    /** Requests answered 400 context_length_exceeded. */
    private final AtomicLong refused = new AtomicLong();
    /** The most completions it serves at once before answering 429, as a rate-limited API does; 0 for no limit. */
    private final int maxConcurrent;

    private StubModelServer(HttpServer server, ExecutorService executor, Duration latency, int maxConcurrent) {
        this.server = server;
        this.executor = executor;
        this.latency = latency;
        this.maxConcurrent = maxConcurrent;
    }

    /**
     * Starts a server.
     *
     * @param bind    where to listen; port 0 picks a free one
     * @param latency how long each call takes
     * @param threads how many calls it serves at once (calls beyond that queue)
     * @throws IOException when the address cannot be bound
     */
    public static StubModelServer start(InetSocketAddress bind, Duration latency, int threads) throws IOException {
        return start(bind, latency, threads, 0);
    }

    /**
     * Starts a server that answers HTTP 429 (a {@code rate_limit_error}, as OpenAI's API does) to
     * any completion beyond {@code maxConcurrent} in flight at once.
     *
     * @param maxConcurrent the most completions served at once; 0 for no limit
     * @throws IOException when the address cannot be bound
     */
    public static StubModelServer start(InetSocketAddress bind, Duration latency, int threads, int maxConcurrent)
            throws IOException {
        if (maxConcurrent < 0) {
            throw new IllegalArgumentException("maxConcurrent must be 0 (no limit) or more, got " + maxConcurrent);
        }
        HttpServer http = HttpServer.create(bind, 256);
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "stub-model-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        StubModelServer stub = new StubModelServer(http, executor, latency, maxConcurrent);
        http.createContext("/v1/chat/completions", stub::handleCompletion);
        http.createContext("/v1/models", stub::handleModels);
        http.setExecutor(executor);
        http.start();
        log.info("stub model API listening on {}", stub.baseUrl());
        return stub;
    }

    /** The base URL to give a worker as {@code --model-api}, e.g. {@code http://127.0.0.1:41234/v1}. */
    public URI baseUrl() {
        InetSocketAddress a = server.getAddress();
        return URI.create("http://" + a.getHostString() + ":" + a.getPort() + "/v1");
    }

    /** Completions answered 429 so far (over {@code maxConcurrent}). */
    public long throttledCount() {
        return throttled.get();
    }

    /** Completions answered 400 {@code context_length_exceeded} so far (past {@link #CONTEXT_TOKENS}). */
    public long refusedCount() {
        return refused.get();
    }

    /**
     * The most completions it was answering at once since it started (or since
     * {@link #resetPeakConcurrency}): how many requests its clients kept in flight, up to its threads.
     */
    public int peakConcurrency() {
        return peakServing.get();
    }

    /** Starts counting {@link #peakConcurrency} afresh from the completions being answered now. */
    public void resetPeakConcurrency() {
        peakServing.set(serving.get());
    }

    /** Completions served so far. */
    public long requestCount() {
        return requests.get();
    }

    /**
     * The answer this server gives to a prompt; exposed so that tests and the demo can predict
     * it.
     */
    public static String answer(String prompt) {
        return answer(prompt, MODEL, null);
    }

    /**
     * The answer this server gives to a prompt sent to {@code model} with {@code seed} (null for
     * none); exposed so that tests and the demo can predict it.
     */
    public static String answer(String prompt, String model, Long seed) {
        Matcher m = ARITHMETIC.matcher(prompt);
        if (!m.find()) {
            return "re: " + prompt;
        }
        long a = Long.parseLong(m.group(1));
        long b = Long.parseLong(m.group(3));
        long result = switch (m.group(2)) {
            case "+" -> a + b;
            case "-" -> a - b;
            default -> a * b;
        };
        boolean small = SMALL_MODEL.equals(model);
        boolean wrongOnPurpose = seed == null && !small
                ? Math.floorMod(prompt.hashCode(), 10) == 0
                : Math.floorMod((prompt + "|" + model + "|" + seed).hashCode(), 100) < (small ? 35 : 10);
        String text = Long.toString(wrongOnPurpose ? result + 1 : result);
        return small ? text + "." : text;
    }

    private void handleCompletion(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                send(exchange, 405, "{\"error\":{\"message\":\"use POST\",\"type\":\"invalid_request_error\"}}");
                return;
            }
            JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = mapper.readTree(in);
            } catch (IOException e) {
                send(exchange, 400, "{\"error\":{\"message\":\"body is not JSON\",\"type\":\"invalid_request_error\"}}");
                return;
            }
            JsonNode messages = body == null ? null : body.get("messages");
            if (messages == null || !messages.isArray() || messages.isEmpty()) {
                send(exchange, 400, "{\"error\":{\"message\":\"messages is required\",\"type\":\"invalid_request_error\"}}");
                return;
            }
            if (maxConcurrent > 0 && inFlight.incrementAndGet() > maxConcurrent) {
                inFlight.decrementAndGet();
                throttled.incrementAndGet();
                send(exchange, 429, "{\"error\":{\"message\":\"Rate limit reached: more than " + maxConcurrent
                        + " requests in flight\",\"type\":\"rate_limit_error\"}}");
                return;
            }
            peakServing.accumulateAndGet(serving.incrementAndGet(), Math::max);
            try {
                answer(exchange, body, messages);
            } finally {
                serving.decrementAndGet();
                if (maxConcurrent > 0) {
                    inFlight.decrementAndGet();
                }
            }
        }
    }

    private void answer(HttpExchange exchange, JsonNode body, JsonNode messages) throws IOException {
        String prompt = messages.get(messages.size() - 1).path("content").asText("");
        String model = body.path("model").asText("stub");
        Long seed = body.hasNonNull("seed") ? body.get("seed").asLong() : null;
        int promptTokens = 0;
        for (JsonNode m : messages) {
            promptTokens += words(m.path("content").asText(""));
        }
        if (promptTokens > CONTEXT_TOKENS) {
            ObjectNode error = mapper.createObjectNode();
            error.putObject("error").put("message", "This model's maximum context length is " + CONTEXT_TOKENS
                    + " tokens. However, you requested " + promptTokens + " tokens in the messages. Please reduce"
                    + " the length of the messages.").put("type", "invalid_request_error").put("param", "messages")
                    .put("code", "context_length_exceeded");
            refused.incrementAndGet();
            send(exchange, 400, mapper.writeValueAsString(error));
            return;
        }
        sleep(latency);
        String text = answer(prompt, model, seed);
        ObjectNode response = mapper.createObjectNode();
        response.put("id", "chatcmpl-" + requests.incrementAndGet());
        response.put("object", "chat.completion");
        response.put("created", System.currentTimeMillis() / 1000);
        response.put("model", model);
        ObjectNode choice = response.putArray("choices").addObject();
        choice.put("index", 0);
        choice.putObject("message").put("role", "assistant").put("content", text);
        choice.put("finish_reason", "stop");
        ObjectNode usage = response.putObject("usage");
        int in = words(prompt);
        int out = words(text);
        usage.put("prompt_tokens", in).put("completion_tokens", out).put("total_tokens", in + out);
        send(exchange, 200, mapper.writeValueAsString(response));
    }

    private void handleModels(HttpExchange exchange) throws IOException {
        try (exchange) {
            // It answers whatever model it is asked for; the list names the ones the demo and the
            // benchmarks ask for, so that a worker's startup check finds its model.
            send(exchange, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"stub\",\"object\":\"model\"},"
                    + "{\"id\":\"" + MODEL + "\",\"object\":\"model\"},"
                    + "{\"id\":\"" + SMALL_MODEL + "\",\"object\":\"model\"}]}");
        }
    }

    private static void send(HttpExchange exchange, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static int words(String s) {
        String trimmed = s.trim();
        return trimmed.isEmpty() ? 0 : trimmed.split("\\s+").length;
    }

    private static void sleep(Duration d) {
        if (d.isZero()) {
            return;
        }
        try {
            // The simulated model latency itself, not a synchronisation.
            TimeUnit.NANOSECONDS.sleep(d.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops serving and releases the port. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
