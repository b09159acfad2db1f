package dev.panoptes.eval;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
 * <p>Thread-safe: one client, with its pool of keep-alive connections, is meant to be shared by
 * all of a worker's jobs. HTTP/1.1 is used: every OpenAI-compatible server speaks it, and it
 * avoids the cleartext HTTP/2 upgrade that some local servers mishandle.
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

    private static final Logger log = LoggerFactory.getLogger(HttpModelClient.class);
    private static final String MASK = "[REDACTED]";

    private final URI baseUrl;
    private final URI endpoint;
    private final String model;
    private final String apiKey;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final int maxAttempts;
    private final Duration retryBudget;
    private final Duration backoffBase;
    private final Duration backoffCap;
    private final Duration maxRetryAfter;
    private final HttpClient http;
    private final ObjectMapper mapper;
    private final ChatCompletions codec;
    private volatile boolean closed;

    private HttpModelClient(Builder b) {
        this.baseUrl = b.baseUrl;
        this.endpoint = URI.create(b.baseUrl + "/chat/completions");
        this.model = b.model;
        this.apiKey = b.apiKey;
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.maxAttempts = b.maxAttempts;
        this.retryBudget = b.retryBudget;
        this.backoffBase = b.backoffBase;
        this.backoffCap = b.backoffCap;
        this.maxRetryAfter = b.maxRetryAfter;
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        this.mapper = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        this.codec = new ChatCompletions(mapper);
    }

    /**
     * Starts configuring a client.
     *
     * @param baseUrl the API's base URL, with or without a trailing {@code /}, such as
     *                {@code http://localhost:8000/v1} or {@code https://api.openai.com/v1};
     *                {@code /chat/completions} is appended to it
     * @param model   the model name sent with every request
     * @throws IllegalArgumentException when the URL is not a plain http or https URL (user info,
     *                                  query and fragment are refused), or the model is blank
     */
    public static Builder builder(URI baseUrl, String model) {
        return new Builder(baseUrl, model);
    }

    /** The URL every request is posted to: the base URL followed by {@code /chat/completions}. */
    public URI endpoint() {
        return endpoint;
    }

    /**
     * The base URL as given to {@link #builder(URI, String)}, without a trailing slash and with a
     * lower-case scheme, such as {@code http://localhost:8000/v1}.
     */
    public URI baseUrl() {
        return baseUrl;
    }

    /** The model name sent with every request. */
    public String model() {
        return model;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Retries inside the call as described in the class documentation; the returned latency
     * is the wall-clock time of the whole call, retries included.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public ModelResponse complete(ModelRequest request) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        if (closed) {
            throw new IllegalStateException("model client for " + endpoint + " is closed");
        }
        byte[] body = codec.requestBody(model, request);
        long start = System.nanoTime();
        long deadline = start + retryBudget.toNanos();
        int attempt = 0;
        while (true) {
            attempt++;
            long remaining = deadline - System.nanoTime();
            Duration timeout = remaining < requestTimeout.toNanos() ? Duration.ofNanos(Math.max(remaining, 1))
                    : requestTimeout;
            AttemptFailure failure;
            try {
                ModelResponse r = attempt(body, timeout);
                long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                if (attempt > 1) {
                    log.info("{} (model {}) succeeded on attempt {} after {}", call(), model, attempt,
                            Texts.millis(latencyMs));
                }
                return new ModelResponse(r.text(), r.finishReason(), r.model(), r.usage(), latencyMs);
            } catch (AttemptFailure f) {
                failure = f;
            }
            long elapsedNanos = System.nanoTime() - start;
            if (failure.scope == FailureScope.WORKER) {
                // The description is a whole sentence saying what to check: it ends up in the
                // coordinator's line about this worker.
                throw new WorkerFaultException(redact(failure.description), failure.getCause());
            }
            if (failure.scope == FailureScope.JOB) {
                throw new JobFailedException(redact(call() + " (model " + model + ") failed with "
                        + failure.description + "; not retried, the request would fail the same way again"),
                        failure.getCause());
            }
            if (!failure.retryHere) {
                throw new WorkerException(redact(call() + " (model " + model + ") failed with "
                        + failure.description), failure.getCause());
            }
            if (attempt >= maxAttempts) {
                throw new WorkerException(redact(call() + " (model " + model + ") failed after " + attempts(attempt)
                        + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                        + ", retries exhausted; last failure: " + failure.description), failure.getCause());
            }
            if (closed) {
                throw new WorkerException(redact(call() + " (model " + model + ") abandoned after "
                        + attempts(attempt) + ": the client was closed; last failure: " + failure.description),
                        failure.getCause());
            }
            Duration delay = delay(attempt, failure);
            if (System.nanoTime() + delay.toNanos() >= deadline) {
                throw new WorkerException(redact(call() + " (model " + model + ") failed after " + attempts(attempt)
                        + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                        + ", retry budget of " + Texts.duration(retryBudget) + " exhausted (next retry was due in "
                        + Texts.duration(delay) + "); last failure: " + failure.description), failure.getCause());
            }
            log.warn("{} (model {}) attempt {} of {} failed: {}; retrying in {}", call(), model, attempt,
                    maxAttempts, redact(failure.description), Texts.duration(delay));
            TimeUnit.NANOSECONDS.sleep(delay.toNanos());
        }
    }

    /** The server's Retry-After, capped, when it sent one; else the jittered backoff. */
    private Duration delay(int failedAttempts, AttemptFailure failure) {
        if (failure.retryAfter != null) {
            return failure.retryAfter.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : failure.retryAfter;
        }
        return Retries.backoff(failedAttempts, backoffBase, backoffCap, ThreadLocalRandom.current().nextDouble());
    }

    /** One exchange: the answer, or why it failed and whether another attempt may help. */
    private ModelResponse attempt(byte[] body, Duration timeout) throws AttemptFailure, InterruptedException {
        HttpRequest.Builder rb = newRequest(endpoint, timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        CompletableFuture<HttpResponse<String>> future =
                http.sendAsync(rb.build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> response;
        try {
            // The request timeout stops waiting for the headers; this bounds the body too.
            response = future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new AttemptFailure(FailureScope.TRANSIENT, "request timed out after " + Texts.duration(timeout), null,
                    null);
        } catch (ExecutionException e) {
            throw transportFailure(e.getCause() == null ? e : e.getCause(), timeout);
        }
        return answer(response);
    }

    private ModelResponse answer(HttpResponse<String> response) throws AttemptFailure {
        int status = response.statusCode();
        String body = response.body();
        if (status >= 200 && status <= 299) {
            try {
                return codec.parseResponse(body);
            } catch (ChatCompletions.BadResponse e) {
                if (e.scope() == FailureScope.WORKER) {
                    throw new AttemptFailure(FailureScope.WORKER, "the model API at " + baseUrl + " answered HTTP "
                            + status + " for model '" + model + "' but " + e.getMessage() + "; check that --model-api"
                            + " is the base URL of an OpenAI-compatible API (the part before /chat/completions)",
                            null, null);
                }
                Duration retryAfter = e.scope() == FailureScope.TRANSIENT ? retryAfter(response) : null;
                throw new AttemptFailure(e.scope(), "HTTP " + status + " but " + e.getMessage(), null, retryAfter);
            }
        }
        Optional<ApiError> error = ApiError.parse(mapper, body);
        FailureScope scope = Retries.scopeOf(status, error.orElse(null));
        if (scope == FailureScope.WORKER) {
            throw new AttemptFailure(scope, workerFaultText(status, response.headers(), serverSaid(error, body)), null,
                    null);
        }
        String description = "HTTP " + status + ": " + serverSaid(error, body);
        throw new AttemptFailure(scope, description, null, scope == FailureScope.TRANSIENT ? retryAfter(response) : null);
    }

    /** The server's own error message, from its error envelope or else an excerpt of the body. */
    static String serverSaid(Optional<ApiError> error, String body) {
        return error.map(ApiError::describe).orElseGet(() -> "body: " + Texts.excerpt(body, 200));
    }

    /**
     * What an answer whose status is the worker's fault ({@link Retries#scopeOf}) means, as one
     * sentence naming the API, the status, the model and the server's message, and saying what
     * to check. Not redacted: callers redact.
     */
    String workerFaultText(int status, HttpHeaders headers, String serverSaid) {
        String at = "the model API at " + baseUrl;
        if (status >= 300 && status <= 399) {
            String location = headers.firstValue("location").map(l -> " to " + l).orElse("");
            return at + " answered HTTP " + status + ", a redirect" + location + "; redirects are not followed:"
                    + " check --model-api (http or https, host, path)";
        }
        String answered = at + " answered HTTP " + status + " for model '" + model + "': " + serverSaid + "; ";
        switch (status) {
            case 401:
                return answered + "check the API key (--api-key or OPENAI_API_KEY)";
            case 403:
                return answered + "the API key may not use this model or endpoint: check --api-key and --model";
            case 404:
                return answered + "check --model-api and --model";
            case 405:
                return answered + "check --model-api: it must be the API's base URL, the part before"
                        + " /chat/completions (such as http://localhost:8000/v1)";
            case 429:
                return answered + "the account behind this worker's API key is out of quota or credit";
            default:
                return answered + "the server does not answer as an OpenAI-compatible API would: check --model-api";
        }
    }

    private static Duration retryAfter(HttpResponse<?> response) {
        return Retries.retryAfter(response.headers(), Instant.now()).orElse(null);
    }

    private AttemptFailure transportFailure(Throwable cause, Duration timeout) {
        FailureScope scope = Retries.transportScope(cause);
        String description = transportText(cause, timeout);
        if (scope == FailureScope.WORKER || cause instanceof IOException) {
            return new AttemptFailure(scope, description, cause, null);
        }
        // Not an I/O failure: a fault in the HTTP stack. The coordinator may try the job again,
        // but repeating it here is pointless.
        return new AttemptFailure(FailureScope.TRANSIENT, false, description, cause, null);
    }

    /**
     * What an exchange that got no HTTP answer failed with, as text for a message: for the
     * worker's faults ({@link Retries#transportScope}) a sentence saying what to check. Not
     * redacted: callers redact.
     *
     * @param timeout the attempt's timeout, for the message
     */
    String transportText(Throwable cause, Duration timeout) {
        String address = hostPort();
        if (Retries.isDnsFailure(cause)) {
            return "cannot resolve the host name '" + baseUrl.getHost() + "' of the model API at " + baseUrl
                    + "; check --model-api";
        }
        if (Retries.isTlsFailure(cause)) {
            return "TLS with the model API at " + address + " failed (" + rootMessage(cause) + "); check --model-api"
                    + " (http or https?) and the server's certificate";
        }
        if (cause instanceof HttpConnectTimeoutException) {
            return "connecting to " + address + " timed out after " + Texts.duration(connectTimeout);
        }
        if (cause instanceof HttpTimeoutException) {
            return "request timed out after " + Texts.duration(timeout);
        }
        if (Retries.inChain(cause, ConnectException.class) != null) {
            // The JDK's client reports a refused connection as a ConnectException with no
            // message, caused by a ClosedChannelException with none either.
            String why = innermostMessage(cause);
            return "cannot connect to the model API at " + address + " (" + (why == null ? "Connection refused" : why)
                    + "); is the model server running?";
        }
        if (cause instanceof IOException) {
            return "I/O error talking to " + address + " (" + rootMessage(cause) + ")";
        }
        return "unexpected failure talking to " + address + " (" + rootMessage(cause) + ")";
    }

    /** {@code host:port} of the model API, with the scheme's default port when the URL has none. */
    String hostPort() {
        int port = baseUrl.getPort() >= 0 ? baseUrl.getPort() : "https".equals(baseUrl.getScheme()) ? 443 : 80;
        return baseUrl.getHost() + ":" + port;
    }

    /** The innermost non-blank message of a failure and its causes, or null when none has one. */
    private static String innermostMessage(Throwable t) {
        String message = null;
        int depth = 0;
        for (Throwable c = t; c != null && depth < 32; c = c.getCause(), depth++) {
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                message = Texts.excerpt(c.getMessage(), 200);
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return message;
    }

    /** The class and the innermost non-empty message of a failure and its causes. */
    private static String rootMessage(Throwable t) {
        String message = null;
        Throwable innermost = t;
        for (Throwable c = t; c != null; c = c.getCause()) {
            innermost = c;
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                message = c.getMessage();
            }
            if (c.getCause() == c) {
                break;
            }
        }
        String name = innermost.getClass().getSimpleName();
        return message == null ? name : name + ": " + Texts.excerpt(message, 200);
    }

    private String call() {
        return "POST " + endpoint;
    }

    private static String attempts(int n) {
        return n == 1 ? "1 attempt" : n + " attempts";
    }

    /** Masks the API key wherever it appears (a server may echo it in an error message). */
    String redact(String text) {
        return apiKey == null || text == null ? text : text.replace(apiKey, MASK);
    }

    /** A request to {@code uri} with the headers every call carries: Accept and, when set, the key. */
    HttpRequest.Builder newRequest(URI uri, Duration timeout) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json");
        if (apiKey != null) {
            rb.header("Authorization", "Bearer " + apiKey);
        }
        return rb;
    }

    /** The shared HTTP client, for {@link ModelApiCheck}. */
    HttpClient http() {
        return http;
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
        return closed;
    }

    /**
     * Stops accepting calls; later calls throw {@link IllegalStateException}. On Java 21 and
     * later this also shuts the underlying {@link HttpClient} down, aborting calls in flight; on
     * Java 17 its connections and threads are released when it becomes unreachable.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Method shutdownNow = HttpClient.class.getMethod("shutdownNow");
            shutdownNow.invoke(http);
        } catch (NoSuchMethodException e) {
            // Java 17-20: nothing to shut down explicitly.
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.debug("shutting down the HTTP client for {} failed", endpoint, e);
        }
    }

    /** The endpoint, model and retry settings; says only whether an API key is set. */
    @Override
    public String toString() {
        return "HttpModelClient[endpoint=" + endpoint + ", model=" + model + ", apiKey=" + (apiKey == null ? "none" : "set")
                + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout
                + ", maxAttempts=" + maxAttempts + ", retryBudget=" + retryBudget + ", backoffBase=" + backoffBase
                + ", backoffCap=" + backoffCap + ", maxRetryAfter=" + maxRetryAfter + (closed ? ", closed" : "") + "]";
    }

    /** Why one attempt failed. Carries no stack trace: it never leaves this class. */
    private static final class AttemptFailure extends Exception {
        private static final long serialVersionUID = 1L;
        /**
         * Whose fault it is: decides WorkerFaultException, JobFailedException or (once retries
         * are spent) WorkerException.
         */
        final FailureScope scope;
        /** Whether to try again within this call (only ever true for TRANSIENT). */
        final boolean retryHere;
        final String description;
        /** The server's requested delay, or null. */
        final transient Duration retryAfter;

        AttemptFailure(FailureScope scope, String description, Throwable cause, Duration retryAfter) {
            this(scope, scope == FailureScope.TRANSIENT, description, cause, retryAfter);
        }

        AttemptFailure(FailureScope scope, boolean retryHere, String description, Throwable cause,
                       Duration retryAfter) {
            super(description, cause, false, false);
            this.scope = scope;
            this.retryHere = retryHere;
            this.description = description;
            this.retryAfter = retryAfter;
        }
    }

    /**
     * Configures an {@link HttpModelClient}. Every setter checks its argument at once and throws
     * {@link IllegalArgumentException} with a message naming the setting.
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

        private Builder(URI baseUrl, String model) {
            this.baseUrl = normalized(baseUrl);
            if (model == null || model.isBlank()) {
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
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
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
         * Builds the client.
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
            String scheme = baseUrl.getScheme();
            if (scheme == null || baseUrl.isOpaque()
                    || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                throw new IllegalArgumentException("base URL must be an http or https URL such as "
                        + "http://localhost:8000/v1, got '" + baseUrl + "'");
            }
            if (baseUrl.getHost() == null) {
                throw new IllegalArgumentException("base URL '" + baseUrl + "' has no valid host name");
            }
            if (baseUrl.getRawQuery() != null || baseUrl.getRawFragment() != null) {
                throw new IllegalArgumentException("base URL '" + baseUrl + "' must not have a query or fragment");
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
    }
}
