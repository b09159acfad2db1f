package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.Redaction;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;

import javax.net.ssl.SSLContext;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * A {@link ModelClient} for any server that speaks OpenAI's chat completions API: OpenAI itself,
 * vLLM, Ollama, llama.cpp's server, and OpenAI-compatible gateways. Each call is one
 * {@code POST {baseUrl}/chat/completions} with {@code "stream": false}.
 *
 * <pre>{@code
 * try (HttpModelClient client = HttpModelClient.builder(URI.create("http://localhost:8000/v1"), "qwen2.5-7b")
 *         .apiKey(System.getenv("OPENAI_API_KEY"))
 *         .build()) {
 *     ModelResponse r = client.complete(new ModelRequest("Say hi", SpecParams.NONE));
 * }
 * }</pre>
 *
 * <h2>Failures</h2>
 * Every failure has an owner ({@link FailureScope}), which decides what happens next:
 * <ul>
 *   <li><b>The worker's</b> ({@link FailureScope#WORKER}): this worker's configuration or its
 *       model server is wrong, and another worker may well succeed with the same job. HTTP 401
 *       and 403 (the key), 404 (the base URL, or a model the server does not serve: vLLM answers
 *       404 for an unknown model name), 405 and redirects (the base URL), 429 whose error type
 *       or code is {@code insufficient_quota} (this worker's account), a 2xx whose JSON is not a
 *       chat completion (the server speaks another API), a refused connection, a host name that
 *       does not resolve, and a TLS failure. Never retried here: a
 *       {@link WorkerFaultException} is thrown at once, whose message says what to check, so
 *       that it reads well where the coordinator reports the worker.</li>
 *   <li><b>The job's</b> ({@link FailureScope#JOB}): the same request would fail anywhere.
 *       400, 413, 422 and every other 4xx (an invalid request, a prompt past the context length,
 *       a content filter), and a 2xx that carries an error without a status. Never retried: a
 *       {@link JobFailedException} is thrown at once.</li>
 *   <li><b>The moment's</b> ({@link FailureScope#TRANSIENT}): retried here, with exponential
 *       backoff and full jitter. Connect and request timeouts, connections reset or closed
 *       early, HTTP 408, 409, 429 (not for quota) and every 5xx (llama.cpp answers 503 while its
 *       model loads, Ollama when its queue is full), and a 2xx whose body is not JSON (a body cut
 *       short by a proxy or a restarting server). A {@code retry-after-ms} or
 *       {@code Retry-After} header (delta-seconds or HTTP date) replaces the computed backoff,
 *       capped at {@link Builder#maxRetryAfter(Duration) maxRetryAfter}. When the attempt count
 *       or the per-call wall-clock budget runs out, a plain (retryable) {@link WorkerException}
 *       is thrown, naming the URL, the last status or cause, the attempts made and the time
 *       spent, so that the coordinator may send the job again later or elsewhere.</li>
 * </ul>
 * {@link #completeAsync} completes its future exceptionally with the same exceptions.
 * Messages carry the HTTP status and the server's own error message.
 * The API key is sent only in the {@code Authorization} header: it is never logged, never in
 * {@link #toString()}, and any echo of it in a server's error message is masked before that
 * message reaches an exception or a log line.
 *
 * <h2>Defaults</h2>
 * <ul>
 *   <li>connect timeout 10 s: a reachable server accepts a
 *       connection in milliseconds; longer means it is down or the address is wrong;</li>
 *   <li>request timeout 120 s per attempt, for the whole
 *       exchange: without streaming, nothing arrives until the model has generated its whole
 *       answer, which takes a minute or more for long answers on modest hardware;</li>
 *   <li>6 attempts (5 retries): with backoff from
 *       500 ms doubling to a cap of
 *       8 s, full jitter, the retries ride out about 8 s of
 *       trouble on average (15.5 s at most), and up to 5 minutes when the server sends
 *       {@code Retry-After}: enough for a blip, a per-minute rate-limit window or a short
 *       overload, without hiding an outage that the coordinator should route around;</li>
 *   <li>retry budget 5 min per call, retries included: enough
 *       for two full-length timeouts and the backoff between them, while bounding how long one
 *       vignette can hold a worker before its job is handed back;</li>
 *   <li>{@code Retry-After} honoured up to 60 s: rate-limit
 *       windows are per minute; a server asking for more is out of quota for longer than one
 *       call should wait (a longer value is clamped to this cap).</li>
 * </ul>
 *
 * <h2>Connections and threads</h2>
 * The client is Apache HttpClient 5's asynchronous one, chosen by the {@code model-client}
 * measurement of BENCHMARKS.md: the cheapest in CPU per call of the clients measured, and its
 * threads do not grow with the calls in flight.
 * <ul>
 *   <li>HTTP/1.1 only: every OpenAI-compatible server speaks it, and it avoids the cleartext
 *       HTTP/2 upgrade that some local servers mishandle. Keep-alive connections are pooled, up
 *       to {@link Builder#maxConnections(int) maxConnections} (default 256), all of them for the
 *       one endpoint a worker talks to; calls beyond that wait for a connection, within their
 *       request timeout. A connection goes back to the pool only once its answer is read whole:
 *       an attempt cancelled or timed out closes its connection at once.</li>
 *   <li>https uses the JVM's default {@link SSLContext} (the JDK's trust store, or the one named
 *       by {@code javax.net.ssl.trustStore}), with host name verification.</li>
 *   <li>Proxies come from the JVM's default {@link java.net.ProxySelector}, that is from the usual
 *       system properties ({@code https.proxyHost}, {@code https.proxyPort},
 *       {@code http.proxyHost}, {@code http.proxyPort}, {@code http.nonProxyHosts}). The JDK's
 *       selector is asked once per endpoint, and again whenever one of those properties has
 *       changed since, so that a change takes effect at the next request; a selector installed
 *       with {@link java.net.ProxySelector#setDefault}, or the JDK's with
 *       {@code java.net.useSystemProxies}, is asked at every request.</li>
 *   <li>A fixed number of daemon threads, whatever the calls in flight:
 *       {@link Builder#ioThreads(int) ioThreads} I/O threads (default 1) that do all the network
 *       work and complete the calls, one idle thread Apache HttpClient keeps after starting them,
 *       and one timer thread for every per-attempt timeout and every wait before a retry: three
 *       threads by default, named {@code model-client-<n>-io-<i>} and
 *       {@code model-client-<n>-timer}. The timer thread also opens new connections, because
 *       the JDK resolves host names by blocking, which must happen neither on a caller's thread
 *       nor on an I/O thread. Nothing runs on {@link java.util.concurrent.ForkJoinPool#commonPool()}.</li>
 * </ul>
 * The API key is also kept out of Apache HttpClient's debug logs: its {@code Authorization}
 * header prints as {@code [REDACTED]}, and the wire log is off.
 *
 * <p>Thread-safe: one client, with its connections and threads, is meant to be shared by all of
 * a worker's jobs. {@link #close()} fails the calls in flight, on the closing thread, and ends
 * the threads.
 *
 * <p>Inside: a {@link Call} per call and an {@link Exchange} per attempt, on the threads and
 * connections of a {@link Transport}; a {@link Diagnosis} reads answers and failures. This class
 * is the public face: the settings, the {@link Builder} that checks them, and the entry points.
 * Its length is the class documentation above, the user's manual of the client, and the
 * builder, which must stay nested to keep the name {@code HttpModelClient.Builder}.
 */
public final class HttpModelClient implements ModelClient, AutoCloseable {
    /** 10 s; see the class documentation for the reasons behind each default. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** 120 s per attempt. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(120);
    /** 6 attempts: the first and 5 retries. */
    public static final int DEFAULT_MAX_ATTEMPTS = 6;
    /** 5 minutes per call, retries included. */
    public static final Duration DEFAULT_RETRY_BUDGET = Duration.ofMinutes(5);
    /** 500 ms: the first retry's backoff ceiling. */
    public static final Duration DEFAULT_BACKOFF_BASE = Duration.ofMillis(500);
    /** 8 s: the largest backoff ceiling. */
    public static final Duration DEFAULT_BACKOFF_CAP = Duration.ofSeconds(8);
    /** 60 s: the longest Retry-After honoured. */
    public static final Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofSeconds(60);
    /** 256 connections: as many as the calls in flight of a worker of capacity 256. */
    public static final int DEFAULT_MAX_CONNECTIONS = 256;
    /**
     * 1 I/O thread: the model-client measurement saw one I/O thread serve thousands of calls a
     * second, far more than any model server answers one worker.
     */
    public static final int DEFAULT_IO_THREADS = 1;

    private final URI baseUrl;
    private final URI endpoint;
    private final String model;
    private final boolean hasApiKey;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final RetryPolicy retries;
    private final int maxConnections;
    private final int ioThreads;
    private final ObjectMapper mapper;
    private final ChatCompletions codec;
    private final Transport transport;
    private final Diagnosis diagnosis;
    private final Calls calls;
    private final URI completionsEndpoint;
    private final TextCompletions textCodec;
    /**
     * The capability check's verdict, once had: completes normally when the API returns prompt
     * log-probabilities, exceptionally with the worker's fault when it does not; null until the
     * first log-likelihood request, and again after a check that failed for a passing reason.
     */
    private final AtomicReference<CompletableFuture<Void>> promptLogprobs = new AtomicReference<>();

    private HttpModelClient(Builder b) {
        this.baseUrl = b.baseUrl;
        this.endpoint = URI.create(b.baseUrl + "/chat/completions");
        this.model = b.model;
        this.hasApiKey = b.apiKey != null;
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.retries = new RetryPolicy(b.maxAttempts, b.retryBudget, b.backoffBase, b.backoffCap, b.maxRetryAfter);
        this.maxConnections = b.maxConnections;
        this.ioThreads = b.ioThreads;
        this.mapper = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        this.codec = new ChatCompletions(mapper);
        this.diagnosis = new Diagnosis(baseUrl, b.apiKey, connectTimeout, mapper, codec);
        this.transport = new Transport(b.apiKey, connectTimeout, requestTimeout, maxConnections, ioThreads,
                b.sslContext, "https".equalsIgnoreCase(b.baseUrl.getScheme()));
        this.calls = new Calls(endpoint, model, requestTimeout, retries, transport, diagnosis);
        this.completionsEndpoint = URI.create(b.baseUrl + "/completions");
        this.textCodec = new TextCompletions(mapper);
    }

    /**
     * Starts configuring a client.
     *
     * @param baseUrl the API's base URL, with or without a trailing {@code /}, such as
     *                {@code http://localhost:8000/v1} or {@code https://api.openai.com/v1};
     *                {@code /chat/completions} is appended to it
     * @param model   the model name sent with requests that name none, or null when every request
     *                names its own (a request naming none then fails as the worker's fault)
     * Any thread.
     *
     * @throws IllegalArgumentException when the URL is not a plain http or https URL (user info,
     *                                  query and fragment are refused), or the model is blank
     */
    public static Builder builder(URI baseUrl, String model) {
        return new Builder(baseUrl, model);
    }

    /** The URL every request is posted to: the base URL followed by {@code /chat/completions}. Any thread. */
    public URI endpoint() {
        return endpoint;
    }

    /**
     * The base URL as given to {@link #builder(URI, String)}, without a trailing slash and with a
     * lower-case scheme, such as {@code http://localhost:8000/v1}. Any thread.
     */
    public URI baseUrl() {
        return baseUrl;
    }

    /**
     * The model name sent with requests that do not name their own ({@link SpecParams#model()}).
     * Any thread.
     */
    public String model() {
        return model;
    }

    /**
     * How many answers were HTTP 429 (too many requests) since this client was built, including
     * those of attempts that were retried. Any thread.
     */
    @Override
    public long throttledCount() {
        return calls.throttledCount();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Retries inside the call as described in the class documentation; the returned latency
     * is the wall-clock time of the whole call, retries included. Waits for
     * {@link #completeAsync(ModelRequest)}; an interrupt cancels the call, which aborts it. Any
     * thread but the client's own (an I/O thread would wait for itself).
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public ModelResponse complete(ModelRequest request) throws InterruptedException {
        CompletableFuture<ModelResponse> call = completeAsync(request);
        try {
            return call.get();
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw rethrowable(e.getCause());
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Returns at once, without blocking: the request is serialised on the calling thread,
     * and everything else happens on this client's threads (see the class documentation). The
     * future completes on one of them, usually an I/O thread, so that what is chained to it
     * without an executor runs there and must not block; it completes on the calling thread
     * only when cancelled, or when the client is closed. Retries wait on the timer thread,
     * holding no thread. Cancelling the future aborts the attempt in flight or the wait for the
     * next one, and no retry follows: an attempt's connection is closed at once, so that the
     * model server sees the client hang up and can stop generating, and it leaves the pool
     * (an attempt that times out is aborted the same way). Any thread.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
        Objects.requireNonNull(request, "request");
        if (calls.isClosed()) {
            throw new IllegalStateException("model client for " + endpoint + " is closed");
        }
        String callModel = ChatRequestBody.modelFor(request, model);
        if (callModel == null) {
            return CompletableFuture.failedFuture(new WorkerFaultException("the job names no model and this worker"
                    + " has no default one (it was started without --model): start the coordinator with --model, or"
                    + " this worker with --model"));
        }
        return calls.start(callModel, codec.requestBody(callModel, request));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code POST {baseUrl}/completions} per vignette, holding every choice's prompt (see
     * {@link TextCompletions} for the request and for how the context/continuation boundary is
     * found). Before its first such request the client checks, once, that the API returns one
     * log-probability per prompt token (the first null) for an {@code echo} request: some servers
     * (llama.cpp's, llama.cpp #27174) return the generated token's only, and scoring their answers
     * would put every benchmark at chance without an error. Such an API fails this and every later
     * log-likelihood request with a {@link WorkerFaultException} naming its shortfall and what
     * serves these jobs, so that the coordinator sends them to another worker. A check that fails
     * for a passing reason is made again by the next request. Retries, cancellation and failures
     * are those of {@link #completeAsync}. Any thread.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public CompletableFuture<ModelResponse> loglikelihoodAsync(LoglikelihoodRequest request) {
        Objects.requireNonNull(request, "request");
        if (calls.isClosed()) {
            throw new IllegalStateException("model client for " + endpoint + " is closed");
        }
        String callModel = request.params().model() != null ? request.params().model() : model;
        if (callModel == null) {
            return CompletableFuture.failedFuture(new WorkerFaultException("the job names no model and this worker"
                    + " has no default one (it was started without --model): start the coordinator with --model, or"
                    + " this worker with --model"));
        }
        CompletableFuture<ModelResponse> result = new CompletableFuture<>();
        promptLogprobsChecked(callModel).whenComplete((ok, refused) -> {
            if (refused != null) {
                result.completeExceptionally(refused instanceof java.util.concurrent.CompletionException
                        && refused.getCause() != null ? refused.getCause() : refused);
                return;
            }
            if (result.isDone()) {
                return;
            }
            CompletableFuture<ModelResponse> call = calls.start(callModel, textCodec.requestBody(callModel, request),
                    completionsEndpoint, body -> textCodec.parseLoglikelihoods(body, request));
            // Cancelling the result (a job's end) aborts the call, as completeAsync's does.
            result.whenComplete((r, t) -> {
                if (result.isCancelled()) {
                    call.cancel(true);
                }
            });
            call.whenComplete((r, t) -> {
                if (t != null) {
                    result.completeExceptionally(t);
                } else {
                    result.complete(r);
                }
            });
        });
        return result;
    }

    /**
     * Why this client refuses every log-likelihood request for the rest of its life, or null while
     * it does not: the capability check found the model API without prompt log-probabilities, or
     * failed in a way that is the worker's (such a verdict is kept, never asked again). Any thread.
     */
    public String loglikelihoodRefusal() {
        CompletableFuture<Void> verdict = promptLogprobs.get();
        if (verdict == null || !verdict.isCompletedExceptionally()) {
            return null;
        }
        try {
            verdict.getNow(null);
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            return e.getCause() instanceof WorkerFaultException fault ? fault.getMessage() : null;
        }
        return null;
    }

    /** The capability check's verdict: made by the first caller, shared by the others. */
    private CompletableFuture<Void> promptLogprobsChecked(String callModel) {
        CompletableFuture<Void> verdict = promptLogprobs.get();
        if (verdict != null) {
            return verdict;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        if (!promptLogprobs.compareAndSet(null, mine)) {
            return promptLogprobs.get();
        }
        calls.start(callModel, textCodec.probeBody(callModel), completionsEndpoint, textCodec::probeVerdict)
                .whenComplete((r, t) -> {
                    if (t != null) {
                        Throwable cause = t instanceof java.util.concurrent.CompletionException && t.getCause() != null
                                ? t.getCause() : t;
                        if (!(cause instanceof WorkerFaultException)) {
                            // A passing failure: the next request checks again.
                            promptLogprobs.compareAndSet(mine, null);
                        }
                        mine.completeExceptionally(cause);
                    } else if (r.text().isEmpty()) {
                        mine.complete(null);
                    } else {
                        mine.completeExceptionally(new WorkerFaultException("the model API at " + baseUrl
                                + " does not return prompt log-probabilities: asked with echo and logprobs at "
                                + completionsEndpoint + ", " + r.text() + ". Multiple-choice (log-likelihood) jobs"
                                + " need one log-probability per prompt token; this worker refuses them rather than"
                                + " score at chance. llama.cpp's server answers so (llama.cpp #27174): serve the model"
                                + " with vLLM, or another server that returns prompt log-probabilities, and run these"
                                + " jobs on a worker pointed at it"));
                    }
                });
        return mine;
    }

    /** What {@link #complete} throws for what a call failed with. */
    private static RuntimeException rethrowable(Throwable failure) {
        if (failure instanceof RuntimeException r) {
            return r;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new WorkerException("the model call failed unexpectedly: " + failure, failure);
    }

    /**
     * Starts one HTTP exchange on the shared connections: {@code method} to {@code uri} with the
     * headers every call carries (Accept and, when set, the key) and, unless null, a JSON body.
     * Never blocks. For {@link ModelApiCheck}.
     *
     * @param timeout how long the whole exchange may take; then it fails with a
     *                {@link TimeoutException} and its connection is closed
     * @return completes with the answer, or exceptionally with what failed; cancelling it aborts
     *         the exchange
     */
    CompletableFuture<Answer> send(String method, URI uri, byte[] body, Duration timeout) {
        return transport.send(method, uri, body, timeout);
    }

    /** Reads answers and failures in this client's words, for {@link ModelApiCheck}. */
    Diagnosis diagnosis() {
        return diagnosis;
    }

    /** The JSON mapper, for {@link ModelApiCheck}. */
    ObjectMapper mapper() {
        return mapper;
    }

    /** The per-attempt request timeout. */
    Duration requestTimeout() {
        return requestTimeout;
    }

    /** Whether {@link #close()} was called. */
    boolean isClosed() {
        return calls.isClosed();
    }

    /** Tasks waiting on the timer thread: attempt timeouts and retry waits. For tests. */
    int pendingTimers() {
        return transport.pendingTimers();
    }

    /** Calls not yet completed. For tests. */
    int callsInFlight() {
        return calls.inFlight();
    }

    /** Calls whose last attempt failed and that wait on the timer for the next one. For tests. */
    int callsWaitingToRetry() {
        return calls.waitingToRetry();
    }

    /** Whether a connection has needed TLS yet, which builds the TLS context. For tests. */
    boolean tlsBuilt() {
        return transport.tlsBuilt();
    }

    /** Pooled connections leased to an exchange (in use, not idle in the pool). For tests. */
    int leasedConnections() {
        return transport.leasedConnections();
    }

    /** Targets whose proxy decision is kept (see {@link ProxyRoutes}). For tests. */
    int proxyDecisionsKept() {
        return transport.routes().decisionsKept();
    }

    /** The prefix of this client's thread names, {@code model-client-<n>}. For tests. */
    String threadPrefix() {
        return transport.threadPrefix();
    }

    /**
     * Stops the client: later calls throw {@link IllegalStateException}; calls in flight or
     * waiting to retry fail at once, on this thread, with a retryable {@link WorkerException}
     * saying the client was closed; the connections are closed and the client's threads end.
     * Idempotent. Call it from a thread of the caller's, not from something chained to a call's
     * future: it waits for the I/O threads to stop (a few seconds at most), and one of them
     * would be waiting for itself.
     */
    @Override
    public void close() {
        if (calls.isClosed()) {
            return;
        }
        calls.close();
        transport.close();
    }

    /** The endpoint, model, retry and connection settings; says only whether an API key is set. */
    @Override
    public String toString() {
        return "HttpModelClient[endpoint=" + endpoint + ", model=" + model + ", apiKey=" + (hasApiKey ? "set" : "none")
                + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout
                + ", maxAttempts=" + retries.maxAttempts() + ", retryBudget=" + retries.retryBudget()
                + ", backoffBase=" + retries.backoffBase() + ", backoffCap=" + retries.backoffCap()
                + ", maxRetryAfter=" + retries.maxRetryAfter() + ", maxConnections=" + maxConnections
                + ", ioThreads=" + ioThreads + (calls.isClosed() ? ", closed" : "") + "]";
    }

    /**
     * Configures an {@link HttpModelClient}. Every setter checks its argument at once and throws
     * {@link IllegalArgumentException} with a message naming the setting. Not thread-safe: one
     * thread configures a builder and builds.
     */
    public static final class Builder {
        private final URI baseUrl;
        private final String model;
        private String apiKey;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private Duration retryBudget = DEFAULT_RETRY_BUDGET;
        private Duration backoffBase = DEFAULT_BACKOFF_BASE;
        private Duration backoffCap = DEFAULT_BACKOFF_CAP;
        private Duration maxRetryAfter = DEFAULT_MAX_RETRY_AFTER;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private int ioThreads = DEFAULT_IO_THREADS;
        private SSLContext sslContext;

        private Builder(URI baseUrl, String model) {
            this.baseUrl = normalized(baseUrl);
            if (model != null && model.isBlank()) {
                throw new IllegalArgumentException("model must not be blank");
            }
            this.model = model;
        }

        /**
         * The API key, sent as {@code Authorization: Bearer <key>}. Null or blank means no key
         * and no header (local servers rarely need one); surrounding whitespace, such as the
         * newline at the end of a key file, is dropped.
         *
         * @throws IllegalArgumentException when the key contains spaces or control characters
         *                                  (the message does not repeat the key)
         */
        public Builder apiKey(String apiKey) {
            if (apiKey == null || apiKey.isBlank()) {
                this.apiKey = null;
                return this;
            }
            String key = apiKey.strip();
            for (int i = 0; i < key.length(); i++) {
                char c = key.charAt(i);
                if (c <= 0x20 || c >= 0x7f) {
                    throw new IllegalArgumentException("apiKey must be printable ASCII without spaces; it has an "
                            + "invalid character at position " + i);
                }
            }
            this.apiKey = key;
            return this;
        }

        /** How long to wait for a TCP (and TLS) connection; positive; default 10 s. */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = positive(connectTimeout, "connectTimeout");
            return this;
        }

        /**
         * How long one attempt may take, from sending the request to the last byte of the
         * response; positive; default 120 s. Never longer than what is left of the retry budget.
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = positive(requestTimeout, "requestTimeout");
            return this;
        }

        /** How many attempts one call makes at most, the first included; at least 1; default 6. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = atLeastOne(maxAttempts, Integer.MAX_VALUE, "maxAttempts");
            return this;
        }

        /**
         * The wall-clock time one call may take, retries and waits included; positive; default
         * 5 min. No retry starts whose wait would end past it, and no attempt runs past it.
         */
        public Builder retryBudget(Duration retryBudget) {
            this.retryBudget = positive(retryBudget, "retryBudget");
            return this;
        }

        /** The first retry's backoff ceiling, doubling per retry; not negative; default 500 ms. */
        public Builder backoffBase(Duration backoffBase) {
            this.backoffBase = notNegative(backoffBase, "backoffBase");
            return this;
        }

        /** The largest backoff ceiling; not negative, at least backoffBase; default 8 s. */
        public Builder backoffCap(Duration backoffCap) {
            this.backoffCap = notNegative(backoffCap, "backoffCap");
            return this;
        }

        /**
         * The longest wait a server's {@code Retry-After} or {@code retry-after-ms} is honoured
         * for; a longer one is cut to this; not negative; default 60 s.
         */
        public Builder maxRetryAfter(Duration maxRetryAfter) {
            this.maxRetryAfter = notNegative(maxRetryAfter, "maxRetryAfter");
            return this;
        }

        /**
         * The most connections kept to the endpoint, in use and idle together, and so the most
         * calls on the wire at once; calls beyond it wait for a connection (within their request
         * timeout). At least 1; default 256. A worker gives its capacity.
         */
        public Builder maxConnections(int maxConnections) {
            this.maxConnections = atLeastOne(maxConnections, Integer.MAX_VALUE, "maxConnections");
            return this;
        }

        /**
         * The I/O threads doing the network work and completing the calls; at least 1, at most
         * 64; default 1. The client's threads are these plus two (see the class documentation),
         * whatever the calls in flight.
         */
        public Builder ioThreads(int ioThreads) {
            this.ioThreads = atLeastOne(ioThreads, 64, "ioThreads");
            return this;
        }

        /**
         * The TLS context for https endpoints, in place of the JVM's default (tests trust their
         * own certificate with it; operators configure the default with the
         * {@code javax.net.ssl.*} properties instead).
         */
        Builder sslContext(SSLContext sslContext) {
            this.sslContext = Objects.requireNonNull(sslContext, "sslContext");
            return this;
        }

        /**
         * Builds the client, and starts its threads (see the class documentation).
         *
         * @throws IllegalArgumentException when backoffCap is below backoffBase
         */
        public HttpModelClient build() {
            if (backoffCap.compareTo(backoffBase) < 0) {
                throw new IllegalArgumentException("backoffCap (" + backoffCap + ") must not be below backoffBase ("
                        + backoffBase + ")");
            }
            return new HttpModelClient(this);
        }

        private static URI normalized(URI baseUrl) {
            if (baseUrl == null) {
                throw new IllegalArgumentException("base URL must not be null");
            }
            if (baseUrl.getRawUserInfo() != null) {
                throw new IllegalArgumentException("base URL must not contain a user name or password; "
                        + "give the API key with apiKey(...)");
            }
            // A refused URL may be one that carries a key: messages show it redacted.
            String shown = Redaction.url(baseUrl.toString());
            String scheme = baseUrl.getScheme();
            if (scheme == null || baseUrl.isOpaque()
                    || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                throw new IllegalArgumentException("base URL must be an http or https URL such as "
                        + "http://localhost:8000/v1, got '" + shown + "'");
            }
            if (baseUrl.getHost() == null) {
                throw new IllegalArgumentException("base URL '" + shown + "' has no valid host name");
            }
            if (baseUrl.getRawQuery() != null || baseUrl.getRawFragment() != null) {
                throw new IllegalArgumentException("base URL '" + shown + "' must not have a query or fragment (not"
                        + " repeated here); give the API key with apiKey(...)");
            }
            String path = baseUrl.getRawPath() == null ? "" : baseUrl.getRawPath();
            while (path.endsWith("/")) {
                path = path.substring(0, path.length() - 1);
            }
            return URI.create(scheme.toLowerCase(Locale.ROOT) + "://" + baseUrl.getRawAuthority() + path);
        }

        private static Duration positive(Duration d, String name) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be a positive duration, got " + d);
            }
            return d;
        }

        private static Duration notNegative(Duration d, String name) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException(name + " must not be negative, got " + d);
            }
            return d;
        }

        /** {@code n} when it is between 1 and {@code max}; {@link Integer#MAX_VALUE} means no upper bound. */
        private static int atLeastOne(int n, int max, String name) {
            if (n < 1 || n > max) {
                throw new IllegalArgumentException(name + (max == Integer.MAX_VALUE ? " must be at least 1"
                        : " must be between 1 and " + max) + ", got " + n);
            }
            return n;
        }
    }
}
