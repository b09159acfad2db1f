package dev.panoptes.eval;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.WorkerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
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
 * Failures are classified the way mature API clients do it:
 * <ul>
 *   <li><b>Retried here</b>, with exponential backoff and full jitter: connection failures
 *       (refused, reset, closed early), connect and request timeouts, HTTP 408, 409, 429 (unless
 *       the account is out of quota) and every 5xx (llama.cpp answers 503 while its model loads,
 *       Ollama when its queue is full). A {@code retry-after-ms} or {@code Retry-After} header
 *       (delta-seconds or HTTP date) replaces the computed backoff, capped at
 *       {@link Builder#maxRetryAfter(Duration) maxRetryAfter}. A 2xx whose body is not JSON is
 *       retried too: a body cut short by a proxy or a restarting server is a transient fault.</li>
 *   <li><b>Never retried</b>: 400, 401, 403, 404, 422 and every other 4xx, redirects (the base
 *       URL is wrong), 429 whose error type or code is {@code insufficient_quota} (billing;
 *       waiting never helps), and a 2xx whose JSON is not a chat completion (no
 *       {@code choices[0].message}: the server speaks another API, and will again). These throw a
 *       non-retryable {@link JobFailedException} at once, whose message carries the HTTP status
 *       and the server's own error message.</li>
 *   <li><b>Retries exhausted</b>, by the attempt count or the per-call wall-clock budget, on a
 *       retryable cause: a retryable {@link WorkerException}, so the coordinator may send the job
 *       again later or elsewhere. Its message names the URL, the last status or cause, the
 *       attempts made and the time spent.</li>
 * </ul>
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
        this.endpoint = b.endpoint;
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
            if (!failure.retryable) {
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
        HttpRequest.Builder rb = HttpRequest.newBuilder(endpoint)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (apiKey != null) {
            rb.header("Authorization", "Bearer " + apiKey);
        }
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
            throw new AttemptFailure(true, "request timed out after " + Texts.duration(timeout), null, null);
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
                Duration retryAfter = e.retryable() ? retryAfter(response) : null;
                throw new AttemptFailure(e.retryable(), "HTTP " + status + " but " + e.getMessage(), null,
                        retryAfter);
            }
        }
        Optional<ApiError> error = ApiError.parse(mapper, body);
        String serverSaid = error.map(ApiError::describe).orElseGet(() -> "body: " + Texts.excerpt(body, 200));
        if (status >= 300 && status <= 399) {
            String location = response.headers().firstValue("location").map(l -> " to " + l).orElse("");
            throw new AttemptFailure(false, "HTTP " + status + ", a redirect" + location
                    + " (check the base URL; redirects are not followed)", null, null);
        }
        boolean retryable = Retries.isRetryableStatus(status, error.orElse(null));
        String description = "HTTP " + status + ": " + serverSaid;
        if (status == 429 && !retryable) {
            description += " [out of quota]";
        }
        throw new AttemptFailure(retryable, description, null, retryable ? retryAfter(response) : null);
    }

    private static Duration retryAfter(HttpResponse<?> response) {
        return Retries.retryAfter(response.headers(), Instant.now()).orElse(null);
    }

    private AttemptFailure transportFailure(Throwable cause, Duration timeout) {
        String address = endpoint.getHost() + ":" + port();
        String detail = rootMessage(cause);
        if (cause instanceof HttpConnectTimeoutException) {
            return new AttemptFailure(true, "connecting to " + address + " timed out after "
                    + Texts.duration(connectTimeout), cause, null);
        }
        if (cause instanceof HttpTimeoutException) {
            return new AttemptFailure(true, "request timed out after " + Texts.duration(timeout), cause, null);
        }
        if (cause instanceof ConnectException) {
            return new AttemptFailure(true, "cannot connect to " + address + " (" + detail + ")", cause, null);
        }
        if (cause instanceof IOException) {
            return new AttemptFailure(true, "I/O error talking to " + address + " (" + detail + ")", cause, null);
        }
        // Not an I/O failure: a fault in the HTTP stack. The coordinator may try the job again,
        // but repeating it here is pointless.
        return new AttemptFailure(true, false, "unexpected failure talking to " + address + " (" + detail + ")",
                cause, null);
    }

    private int port() {
        if (endpoint.getPort() >= 0) {
            return endpoint.getPort();
        }
        return "https".equalsIgnoreCase(endpoint.getScheme()) ? 443 : 80;
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
    private String redact(String text) {
        return apiKey == null || text == null ? text : text.replace(apiKey, MASK);
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
        /** Whether the failure may pass: decides WorkerException or JobFailedException. */
        final boolean retryable;
        /** Whether to try again within this call (only ever true when retryable). */
        final boolean retryHere;
        final String description;
        /** The server's requested delay, or null. */
        final transient Duration retryAfter;

        AttemptFailure(boolean retryable, String description, Throwable cause, Duration retryAfter) {
            this(retryable, retryable, description, cause, retryAfter);
        }

        AttemptFailure(boolean retryable, boolean retryHere, String description, Throwable cause,
                       Duration retryAfter) {
            super(description, cause, false, false);
            this.retryable = retryable;
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
        private final URI endpoint;
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
            this.endpoint = endpointFor(baseUrl);
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

        private static URI endpointFor(URI baseUrl) {
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
            return URI.create(scheme.toLowerCase(Locale.ROOT) + "://" + baseUrl.getRawAuthority() + path
                    + "/chat/completions");
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
