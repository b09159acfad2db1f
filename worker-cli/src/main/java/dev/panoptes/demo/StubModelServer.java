package dev.panoptes.demo;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.panoptes.control.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
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
 * <p>It answers up to {@code threads} calls at once, as a model server's slots; calls beyond that
 * wait their turn, and their latency starts when they get one. Threads: the JDK server's
 * dispatcher thread accepts connections; a few handler threads (at most one per processor) read
 * each request and write its answer's bytes, in parallel (the costly part: a text completion with
 * prompt log-probabilities takes about a millisecond of CPU), as a real server computes an answer
 * while its call runs; one timer thread only sends the answers whose latency is over. A call
 * waiting out its latency or its turn holds no thread, so a call costs the stub little CPU beyond
 * the JDK server's own, which matters to a benchmark that runs it beside the client it measures.
 *
 * <p>Its context length is {@value #CONTEXT_TOKENS} tokens (words, here): a request whose
 * messages hold more is answered HTTP 400 {@code context_length_exceeded}, in OpenAI's envelope
 * and with vLLM's wording, as a real server answers an over-long prompt. So a test makes one
 * vignette of a suite fail for what it holds by making its prompt long enough.
 *
 * <p>It also serves OpenAI's text completions, {@code POST /v1/completions}, with {@code echo}
 * and {@code logprobs} as vLLM does (see {@link TextCompletion}: deterministic prompt
 * log-probabilities that favour the right answer to an arithmetic question most of the time),
 * and {@code POST /tokenize}; {@link #servePromptLogprobs(boolean) servePromptLogprobs(false)}
 * makes it answer as a server without prompt log-probabilities (llama.cpp's) does.
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
    /** Reads requests and sends the answers that wait for nothing. */
    private final ExecutorService handlers;
    /** Sends each answer once its latency is over. */
    private final ScheduledExecutorService timer;
    private final Duration latency;
    private final ObjectMapper mapper = new ObjectMapper();
    private final AtomicLong requests = new AtomicLong();
    /** Numbers the answers' ids, as they are written (a request is counted in {@link #requests} once answered). */
    private final AtomicLong ids = new AtomicLong();
    /** Requests answered 429 because more than {@link #maxConcurrent} were in flight. */
    private final AtomicLong throttled = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Completions being answered now (waiting out their latency, mostly), and the most there ever were at once. */
    private final AtomicInteger serving = new AtomicInteger();
    private final AtomicInteger peakServing = new AtomicInteger();
    /** Requests answered 400 context_length_exceeded. */
    private final AtomicLong refused = new AtomicLong();
    /** The most completions it serves at once before answering 429, as a rate-limited API does; 0 for no limit. */
    private final int maxConcurrent;
    /** The most completions it answers at once, as a model server's slots; more wait their turn. */
    private final int turns;
    /** Completions whose latency runs now; guarded by {@link #waiting}. */
    private int answering;
    /** Completions admitted while every turn was taken, oldest first; each starts its latency when a turn ends. */
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    /** Whether {@code /v1/completions} returns prompt log-probabilities (vLLM) or not (llama.cpp's server). */
    private volatile boolean promptLogprobs = true;

    private StubModelServer(HttpServer server, ExecutorService handlers, ScheduledExecutorService timer,
            Duration latency, int turns, int maxConcurrent) {
        this.turns = turns;
        this.server = server;
        this.handlers = handlers;
        this.timer = timer;
        this.latency = latency;
        this.maxConcurrent = maxConcurrent;
    }

    /**
     * Starts a server.
     *
     * @param bind    where to listen; port 0 picks a free one
     * @param latency how long each call takes
     * @param threads how many calls it answers at once, as a model server's slots (calls beyond that
     *                wait their turn, and their latency starts when they get one); a call waiting
     *                out its latency holds no thread
     * @throws IOException when the address cannot be bound
     */
    public static StubModelServer start(InetSocketAddress bind, Duration latency, int threads) throws IOException {
        return start(bind, latency, threads, 0);
    }

    /**
     * Starts a server that answers HTTP 429 (a {@code rate_limit_error}, as OpenAI's API does) to
     * any completion beyond {@code maxConcurrent} in flight at once.
     *
     * @param maxConcurrent the most completions in flight at once (waiting out their latency); 0 for no limit
     * @throws IOException when the address cannot be bound
     */
    public static StubModelServer start(InetSocketAddress bind, Duration latency, int threads, int maxConcurrent)
            throws IOException {
        if (maxConcurrent < 0) {
            throw new IllegalArgumentException("maxConcurrent must be 0 (no limit) or more, got " + maxConcurrent);
        }
        HttpServer http = HttpServer.create(bind, 256);
        ExecutorService handlers = Executors.newFixedThreadPool(handlerThreads(threads), daemons("stub-model-"));
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(daemons("stub-model-timer-"));
        StubModelServer stub = new StubModelServer(http, handlers, timer, latency, threads, maxConcurrent);
        http.createContext("/v1/chat/completions", stub::handleCompletion);
        http.createContext("/v1/models", stub::handleModels);
        http.createContext("/v1/completions", stub::handleTextCompletion);
        http.createContext("/tokenize", stub::handleTokenize);
        http.setExecutor(handlers);
        http.start();
        log.info("stub model API listening on {}", stub.baseUrl());
        return stub;
    }

    /**
     * A handler thread never waits out the latency: it reads a request as it arrives and decides
     * its answer, CPU work, so more threads than processors would only take turns. And a few
     * threads that stay warm cost less per call than hundreds woken in turn: a benchmark asked for
     * 512, and the hand-offs showed in the stub's CPU.
     */
    private static int handlerThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        return Math.min(threads, Runtime.getRuntime().availableProcessors());
    }

    private static ThreadFactory daemons(String prefix) {
        return DaemonThreads.named(n -> prefix + (n + 1));
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
     * {@link #resetPeakConcurrency}): how many requests its clients kept in flight.
     */
    public int peakConcurrency() {
        return peakServing.get();
    }

    /** Starts counting {@link #peakConcurrency} afresh from the completions being answered now. */
    public void resetPeakConcurrency() {
        peakServing.set(serving.get());
    }

    /** Completions admitted and waiting for a turn (all {@code threads} being answered). */
    public int waitingTurn() {
        synchronized (waiting) {
            return waiting.size();
        }
    }

    /**
     * Makes {@code /v1/completions} answer as a server without prompt log-probabilities does
     * (llama.cpp's: {@code echo} ignored, the generated token's log-probability only), or as vLLM
     * does again; vLLM's way is the default. Any thread; applies to requests read from then on.
     */
    public void servePromptLogprobs(boolean serve) {
        this.promptLogprobs = serve;
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

    /**
     * Handles one completion on a handler thread: reads and checks the request, decides the
     * answer, and sends it after the latency from the timer thread, which then owns the exchange;
     * errors, and every answer when the latency is zero, are sent at once from here.
     */
    private void handleCompletion(HttpExchange exchange) throws IOException {
        serveClosing(exchange, this::readChat);
    }

    /** Handles one text completion ({@code /v1/completions}, see {@link TextCompletion}) as a chat completion is. */
    private void handleTextCompletion(HttpExchange exchange) throws IOException {
        serveClosing(exchange, this::readText);
    }

    private void serveClosing(HttpExchange exchange, Reader reader) throws IOException {
        boolean answersLater = false;
        try {
            answersLater = serve(exchange, reader);
        } finally {
            if (!answersLater) {
                exchange.close();
            }
        }
    }

    /** Reads a request body into its answer; throws IllegalArgumentException with what a 400 says. */
    @FunctionalInterface
    private interface Reader {
        StubAnswer read(InputStream in) throws IOException;
    }

    private StubAnswer readChat(InputStream in) throws IOException {
        byte[] body = in.readAllBytes();
        if (StubAgent.offersTools(body) || StubAgent.asksForCode(body)) {
            // An agent's turn or a code problem: rare enough to read as a tree.
            StubAnswer answer = StubAgent.answering(mapper.readTree(body));
            if (answer != null) {
                return answer;
            }
        }
        try (JsonParser json = mapper.createParser(body)) {
            ChatRequest request = ChatRequest.read(json);
            if (request == null) {
                throw new IllegalArgumentException("messages is required");
            }
            return Completion.answering(request);
        }
    }

    private StubAnswer readText(InputStream in) throws IOException {
        return TextCompletion.answering(mapper.readTree(in), promptLogprobs);
    }

    /** Answers a completion now, or schedules its answer; true when scheduled (the exchange is then the timer's). */
    private boolean serve(HttpExchange exchange, Reader reader) throws IOException {
        if (!"POST".equals(exchange.getRequestMethod())) {
            send(exchange, 405, "{\"error\":{\"message\":\"use POST\",\"type\":\"invalid_request_error\"}}");
            return false;
        }
        StubAnswer completion;
        try (InputStream in = exchange.getRequestBody()) {
            completion = reader.read(in);
        } catch (IOException e) {
            send(exchange, 400, "{\"error\":{\"message\":\"body is not JSON\",\"type\":\"invalid_request_error\"}}");
            return false;
        } catch (IllegalArgumentException e) {
            send(exchange, 400, mapper.createObjectNode().set("error", mapper.createObjectNode()
                    .put("message", e.getMessage()).put("type", "invalid_request_error")).toString());
            return false;
        }
        Slot slot = admit();
        if (slot == null) {
            send(exchange, 429, "{\"error\":{\"message\":\"Rate limit reached: more than " + maxConcurrent
                    + " requests in flight\",\"type\":\"rate_limit_error\"}}");
            return false;
        }
        boolean scheduled = false;
        try {
            if (completion.promptTokens() > CONTEXT_TOKENS) {
                refused.incrementAndGet();
                slot.release();
                send(exchange, 400, contextLengthExceeded(completion.promptTokens()));
                return false;
            }
            // Written here, on the handler thread: answers are written in parallel, and the one timer
            // thread only sends them (when it wrote them too, it was the stub's bottleneck: 64
            // text completions in flight waited hundreds of milliseconds for a 1 ms latency).
            byte[] answer = completion.json(ids.incrementAndGet(), System.currentTimeMillis() / 1000)
                    .getBytes(StandardCharsets.UTF_8);
            if (latency.isZero()) {
                // No latency to wait out: answered here, on the handler thread, without a turn.
                peakServing.accumulateAndGet(serving.incrementAndGet(), Math::max);
                try {
                    sendCompletion(exchange, answer, slot);
                } finally {
                    serving.decrementAndGet();
                }
                return false;
            }
            takeTurn(new Pending(exchange, answer, slot));
            scheduled = true;
            return true;
        } finally {
            if (!scheduled) {
                slot.release();
            }
        }
    }

    /** A completion written and waiting to be sent after its latency; its exchange is no handler's any more. */
    private record Pending(HttpExchange exchange, byte[] answer, Slot slot) {
    }

    /** Starts the call's latency now when a turn is free, else queues it behind the others. */
    private void takeTurn(Pending call) {
        synchronized (waiting) {
            if (answering >= turns) {
                waiting.addLast(call);
                return;
            }
            answering++;
        }
        startLatency(call);
    }

    /** A call's turn is over: the next waiting call, if any, takes it and starts its latency. */
    private void endTurn() {
        Pending next;
        synchronized (waiting) {
            next = waiting.pollFirst();
            if (next == null) {
                answering--;
                return;
            }
        }
        startLatency(next);
    }

    private void startLatency(Pending call) {
        peakServing.accumulateAndGet(serving.incrementAndGet(), Math::max);
        call.slot().answering = true;
        try {
            timer.schedule(() -> sendLater(call), latency.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // Closed meanwhile: the call gets no answer, its connection is closed.
            call.slot().release();
            call.exchange().close();
        }
    }

    /** On the timer thread, once the latency is over: sends the answer and closes the exchange, whatever happens. */
    private void sendLater(Pending call) {
        try (HttpExchange exchange = call.exchange()) {
            sendCompletion(exchange, call.answer(), call.slot());
        } catch (IOException | RuntimeException e) {
            // The client went away (it timed out, say): nobody is left to tell.
            log.debug("could not send a completion", e);
        } finally {
            call.slot().release();
        }
    }

    private void sendCompletion(HttpExchange exchange, byte[] answer, Slot slot) throws IOException {
        requests.incrementAndGet();
        // Released before the answer goes out: a client that sends its next call as soon as it
        // reads this answer must not find this call still counted, in peakConcurrency or against
        // maxConcurrent.
        slot.release();
        send(exchange, 200, answer);
    }

    /** Counts a completion in flight; null, and counted as throttled, when that would pass {@link #maxConcurrent}. */
    private Slot admit() {
        if (maxConcurrent > 0 && inFlight.incrementAndGet() > maxConcurrent) {
            inFlight.decrementAndGet();
            throttled.incrementAndGet();
            return null;
        }
        return new Slot();
    }

    /**
     * One admitted completion, counted in flight until {@link #release()}: at most once, whichever
     * way its call ends; while {@link #answering}, it holds a turn, which its release ends. Used by
     * one thread at a time (the handler's, then the one that starts its latency, then the timer's,
     * in an order the queue's lock and the scheduling make), so it needs no lock of its own.
     */
    private final class Slot {
        private boolean released;
        /** Its latency runs (or ran): it holds a turn and is counted in {@link #serving}. */
        boolean answering;

        void release() {
            if (released) {
                return;
            }
            released = true;
            if (maxConcurrent > 0) {
                inFlight.decrementAndGet();
            }
            if (answering) {
                serving.decrementAndGet();
                endTurn();
            }
        }
    }

    /** The 400 a real server (vLLM's wording, OpenAI's envelope) answers to a prompt past its context. */
    private static String contextLengthExceeded(int promptTokens) {
        return "{\"error\":{\"message\":\"This model's maximum context length is " + CONTEXT_TOKENS
                + " tokens. However, you requested " + promptTokens + " tokens in the messages. Please reduce"
                + " the length of the messages.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                + "\"code\":\"context_length_exceeded\"}}";
    }

    /**
     * {@code POST /tokenize}, as vLLM ({@code {"prompt"}}) and llama.cpp's server ({@code {"content"}})
     * serve it: the token ids of the text in {@link StubTokenizer}'s vocabulary, their count, the
     * context length, and each token's text.
     */
    private void handleTokenize(HttpExchange exchange) throws IOException {
        try (exchange) {
            com.fasterxml.jackson.databind.JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = mapper.readTree(in);
            } catch (IOException e) {
                send(exchange, 400, "{\"error\":{\"message\":\"body is not JSON\",\"type\":\"invalid_request_error\"}}");
                return;
            }
            com.fasterxml.jackson.databind.JsonNode text = body == null ? null
                    : body.has("prompt") ? body.get("prompt") : body.get("content");
            if (text == null || !text.isTextual()) {
                send(exchange, 400, "{\"error\":{\"message\":\"prompt (or content) is required, as text\","
                        + "\"type\":\"invalid_request_error\"}}");
                return;
            }
            com.fasterxml.jackson.databind.node.ObjectNode answer = mapper.createObjectNode();
            com.fasterxml.jackson.databind.node.ArrayNode ids = answer.putArray("tokens");
            com.fasterxml.jackson.databind.node.ArrayNode strings = mapper.createArrayNode();
            List<StubTokenizer.Token> tokens = StubTokenizer.tokens(text.asText());
            for (StubTokenizer.Token t : tokens) {
                ids.add(t.id());
                strings.add(t.text());
            }
            answer.put("count", tokens.size()).put("max_model_len", CONTEXT_TOKENS).set("token_strs", strings);
            send(exchange, 200, answer.toString());
        }
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
        send(exchange, status, json.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int status, byte[] bytes) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * Stops serving and releases the port. Calls still waiting out their latency or their turn get
     * no answer: their connections are closed.
     */
    @Override
    public void close() {
        server.stop(0);
        timer.shutdownNow();
        handlers.shutdownNow();
        List<Pending> left;
        synchronized (waiting) {
            left = new ArrayList<>(waiting);
            waiting.clear();
        }
        left.forEach(call -> call.exchange().close());
    }
}
