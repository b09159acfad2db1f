package dev.panoptes.eval.http;

import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;

import dev.panoptes.control.Plural;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.Redaction;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.HttpHostConnectException;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.routing.SystemDefaultRoutePlanner;
import org.apache.hc.client5.http.nio.AsyncConnectionEndpoint;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.concurrent.ComplexFuture;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.URIScheme;
import org.apache.hc.core5.http.config.RegistryBuilder;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.AsyncRequestProducer;
import org.apache.hc.core5.http.nio.AsyncResponseConsumer;
import org.apache.hc.core5.http.nio.CapacityChannel;
import org.apache.hc.core5.http.nio.entity.AsyncEntityProducers;
import org.apache.hc.core5.http.nio.entity.BasicAsyncEntityConsumer;
import org.apache.hc.core5.http.nio.ssl.TlsStrategy;
import org.apache.hc.core5.http.nio.support.AsyncRequestBuilder;
import org.apache.hc.core5.http.nio.support.BasicResponseConsumer;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.pool.PoolReusePolicy;
import org.apache.hc.core5.reactor.ConnectionInitiator;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

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
 *       {@code http.proxyHost}, {@code http.proxyPort}, {@code http.nonProxyHosts}), read at each
 *       new connection.</li>
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
 * a worker's jobs. {@link #close()} fails the calls in flight and ends the threads.
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

    private static final Logger log = LoggerFactory.getLogger(HttpModelClient.class);
    private static final String MASK = "[REDACTED]";
    private static final ContentType JSON = ContentType.create("application/json");
    /**
     * Apache HttpClient's own socket timeout is set past the request timeout, so that this
     * client's timer is what ends a slow attempt (with its own message); it also closes
     * connections idle that long.
     */
    private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofSeconds(10);
    /** The attribute of an exchange's HTTP context that names its {@link Exchange}. */
    private static final String EXCHANGE = "dev.panoptes.eval.exchange";
    /** Numbers the clients of this JVM, for their thread names. */
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final URI baseUrl;
    private final URI endpoint;
    private final String model;
    private final String apiKey;
    private final Header authorization;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final int maxAttempts;
    private final Duration retryBudget;
    private final Duration backoffBase;
    private final Duration backoffCap;
    private final Duration maxRetryAfter;
    private final int maxConnections;
    private final int ioThreads;
    private final String threadPrefix;
    private final ObjectMapper mapper;
    private final ChatCompletions codec;
    /** Timeouts, retry waits and new connections; one thread. */
    private final ScheduledThreadPoolExecutor timer;
    private final CloseableHttpAsyncClient http;
    /** The pool of {@link #http}, for its statistics. */
    private final ConnectionManager connections;
    /** The calls not yet completed, so that {@link #close()} can fail them. */
    private final Set<Call> live = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** 429 answers seen, retried ones included; read by whoever reports them to a coordinator. */
    private final java.util.concurrent.atomic.LongAdder throttled = new java.util.concurrent.atomic.LongAdder();

    private HttpModelClient(Builder b) {
        this.baseUrl = b.baseUrl;
        this.endpoint = URI.create(b.baseUrl + "/chat/completions");
        this.model = b.model;
        this.apiKey = b.apiKey;
        this.authorization = apiKey == null ? null : new AuthorizationHeader(apiKey);
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.maxAttempts = b.maxAttempts;
        this.retryBudget = b.retryBudget;
        this.backoffBase = b.backoffBase;
        this.backoffCap = b.backoffCap;
        this.maxRetryAfter = b.maxRetryAfter;
        this.maxConnections = b.maxConnections;
        this.ioThreads = b.ioThreads;
        this.threadPrefix = "model-client-" + CLIENTS.incrementAndGet();
        this.mapper = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        this.codec = new ChatCompletions(mapper);

        this.timer = new ScheduledThreadPoolExecutor(1, daemons(threadPrefix + "-timer", false));
        // Every attempt schedules its timeout and nearly every one cancels it: without this the
        // queue would hold each cancelled timeout until it was due.
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timer.prestartAllCoreThreads();

        SSLContext ssl = b.sslContext;
        if (ssl == null) {
            try {
                ssl = SSLContext.getDefault();
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("this JVM has no default TLS context", e);
            }
        }
        TlsStrategy tls = ClientTlsStrategyBuilder.create().setSslContext(ssl).buildAsync();
        this.connections = new ConnectionManager(tls, timer);
        connections.setMaxTotal(maxConnections);
        connections.setDefaultMaxPerRoute(maxConnections);
        connections.setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.of(connectTimeout))
                .setSocketTimeout(Timeout.of(requestTimeout.plus(SOCKET_TIMEOUT_MARGIN)))
                .build());
        connections.setDefaultTlsConfig(TlsConfig.custom()
                .setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                .setHandshakeTimeout(Timeout.of(connectTimeout))
                .build());
        this.http = HttpAsyncClients.custom()
                .setConnectionManager(connections)
                .setIOReactorConfig(IOReactorConfig.custom().setIoThreadCount(ioThreads).setTcpNoDelay(true).build())
                .setThreadFactory(daemons(threadPrefix + "-io", true))
                // The default callback logs "ERROR ... null" when close() interrupts an I/O thread
                // at exit; a failure while the client is open still shows, named.
                .setIoReactorExceptionCallback(this::ioReactorFailed)
                .setRoutePlanner(new SystemDefaultRoutePlanner(null))
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setRedirectsEnabled(false)
                        .setAuthenticationEnabled(false)
                        .setContentCompressionEnabled(false)
                        .setExpectContinueEnabled(false)
                        .setProtocolUpgradeEnabled(false)
                        // Cancelling an exchange closes its connection: the server sees the call
                        // abandoned and can stop generating. Apache's cancel does not always get
                        // there (see AbortableExecRuntime), so an Exchange also aborts its runtime.
                        .setHardCancellationEnabled(true)
                        .setResponseTimeout(Timeout.of(requestTimeout.plus(SOCKET_TIMEOUT_MARGIN)))
                        // A call waiting for a free connection waits within its attempt's timeout.
                        .setConnectionRequestTimeout(Timeout.of(requestTimeout.plus(SOCKET_TIMEOUT_MARGIN)))
                        .build())
                // Before the connection is leased: from there on an Exchange can abort it.
                .addExecInterceptorBefore(ChainElement.CONNECT.name(), "abortable-exchange",
                        HttpModelClient::abortable)
                // Retries and redirects are this class's business: Apache's would retry behind
                // the failure policy's back.
                .disableAutomaticRetries()
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableConnectionState()
                .disableContentCompression()
                // No wire log: it would print the Authorization header at DEBUG.
                .setIoSessionDecorator(session -> session)
                .build();
        http.start();
    }

    /**
     * The step of Apache's exec chain just before the connection is leased: runs the rest of the
     * exchange on an {@link AbortableExecRuntime}, and hands that to the {@link Exchange} named
     * by the exchange's context, so that the exchange's abort closes the connection it holds
     * whatever Apache's cancel does. On the thread that starts the exchange.
     */
    private static void abortable(HttpRequest request, AsyncEntityProducer entity, AsyncExecChain.Scope scope,
                                  AsyncExecChain chain, AsyncExecCallback callback)
            throws HttpException, IOException {
        AbortableExecRuntime runtime = new AbortableExecRuntime(scope.execRuntime);
        if (scope.clientContext.getAttribute(EXCHANGE) instanceof Exchange x) {
            x.attach(runtime);
        }
        chain.proceed(request, entity, new AsyncExecChain.Scope(scope.exchangeId, scope.route, scope.originalRequest,
                scope.cancellableDependency, scope.clientContext, runtime, scope.scheduler, scope.execCount), callback);
    }

    private static ThreadFactory daemons(String name, boolean numbered) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, numbered ? name + "-" + n.incrementAndGet() : name);
            t.setDaemon(true);
            return t;
        };
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
        return throttled.sum();
    }

    /** The model a request asks for: its own, else this client's. */
    String modelFor(ModelRequest request) {
        String asked = request.params().model();
        return asked != null ? asked : model;
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
        if (closed) {
            throw new IllegalStateException("model client for " + endpoint + " is closed");
        }
        String callModel = modelFor(request);
        if (callModel == null) {
            return CompletableFuture.failedFuture(new WorkerFaultException("the job names no model and this worker"
                    + " has no default one (it was started without --model): start the coordinator with --model, or"
                    + " this worker with --model"));
        }
        Call call = new Call(callModel, codec.requestBody(callModel, request));
        live.add(call);
        if (closed) {
            // close() may have missed this call: it must not be left waiting.
            call.abandon();
            return call;
        }
        call.next();
        return call;
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

    /** The server's Retry-After, capped, when it sent one; else the jittered backoff. */
    private Duration delay(int failedAttempts, AttemptFailure failure) {
        if (failure.retryAfter != null) {
            return failure.retryAfter.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : failure.retryAfter;
        }
        return Retries.backoff(failedAttempts, backoffBase, backoffCap, ThreadLocalRandom.current().nextDouble());
    }

    /**
     * Starts one HTTP exchange on the shared connections: {@code method} to {@code uri} with the
     * headers every call carries (Accept and, when set, the key) and, unless null, a JSON body.
     * Never blocks. For {@link ModelApiCheck} and the calls.
     *
     * @param timeout how long the whole exchange may take; then it fails with a
     *                {@link TimeoutException} and its connection is closed
     * @return completes with the answer, or exceptionally with what failed; cancelling it aborts
     *         the exchange
     */
    Exchange send(String method, URI uri, byte[] body, Duration timeout) {
        Exchange x = new Exchange(timeout);
        x.start(request(method, uri, body));
        return x;
    }

    /** A request with the headers every call carries: Accept and, when set, the key. */
    private AsyncRequestProducer request(String method, URI uri, byte[] body) {
        AsyncRequestBuilder request = AsyncRequestBuilder.create(method).setUri(uri)
                .addHeader("Accept", "application/json");
        if (authorization != null) {
            request.addHeader(authorization);
        }
        if (body != null) {
            request.setEntity(AsyncEntityProducers.create(body, JSON));
        }
        return request.build();
    }

    /** The answer to a 2xx, or why the attempt failed and whether another may help. */
    private ModelResponse answer(Answer response, String model) throws AttemptFailure {
        int status = response.status();
        if (status == 429) {
            throttled.increment();
        }
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
            throw new AttemptFailure(scope, workerFaultText(status, model, response::header, serverSaid(error, body)), null,
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
     *
     * @param headers the answer's headers by name (case-insensitive), for a redirect's location
     */
    String workerFaultText(int status, Function<String, Optional<String>> headers, String serverSaid) {
        return workerFaultText(status, model, headers, serverSaid);
    }

    /** As {@link #workerFaultText(int, Function, String)}, for a call that asked for {@code model}. */
    String workerFaultText(int status, String model, Function<String, Optional<String>> headers, String serverSaid) {
        String at = "the model API at " + baseUrl;
        if (status >= 300 && status <= 399) {
            String location = headers.apply("location").map(l -> " to " + l).orElse("");
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

    private static Duration retryAfter(Answer response) {
        return Retries.retryAfter(response::header, Instant.now()).orElse(null);
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
        if (cause instanceof ConnectTimeoutException) {
            return "connecting to " + address + " timed out after " + Texts.duration(connectTimeout);
        }
        if (cause instanceof TimeoutException || cause instanceof SocketTimeoutException) {
            return "request timed out after " + Texts.duration(timeout);
        }
        if (Retries.inChain(cause, ConnectException.class) != null) {
            String why = innermostMessage(cause);
            // Apache HttpClient says "Connect to http://host:port [/address] failed: Connection
            // refused"; the address is in the sentence already.
            int failed = why == null ? -1 : why.lastIndexOf("failed: ");
            if (failed >= 0 && Retries.inChain(cause, HttpHostConnectException.class) != null) {
                why = why.substring(failed + "failed: ".length());
            }
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
        return Plural.of(n, "attempt");
    }

    /** Masks the API key wherever it appears (a server may echo it in an error message). */
    String redact(String text) {
        return apiKey == null || text == null ? text : text.replace(apiKey, MASK);
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

    /** Tasks waiting on the timer thread: attempt timeouts and retry waits. For tests. */
    int pendingTimers() {
        return timer.getQueue().size();
    }

    /** Calls not yet completed. For tests. */
    int callsInFlight() {
        return live.size();
    }

    /** Pooled connections leased to an exchange (in use, not idle in the pool). For tests. */
    int leasedConnections() {
        return connections.getTotalStats().getLeased();
    }

    /** The prefix of this client's thread names, {@code model-client-<n>}. For tests. */
    String threadPrefix() {
        return threadPrefix;
    }

    /**
     * Stops the client: later calls throw {@link IllegalStateException}; calls in flight or
     * waiting to retry fail at once with a retryable {@link WorkerException} saying the client
     * was closed; the connections are closed and the client's threads end. Idempotent. Call it
     * from a thread of the caller's, not from something chained to a call's future: it waits
     * for the I/O threads to stop (a few seconds at most), and one of them would be waiting for
     * itself.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Call call : live) {
            call.abandon();
        }
        http.close(CloseMode.IMMEDIATE);
        timer.shutdownNow();
    }

    private void ioReactorFailed(Exception e) {
        if (closed) {
            log.debug("model client I/O thread stopped while closing: {}", e.toString());
        } else {
            log.warn("model client I/O thread failed (calls in progress fail and are retried): {}", e.toString(), e);
        }
    }

    /** The endpoint, model, retry and connection settings; says only whether an API key is set. */
    @Override
    public String toString() {
        return "HttpModelClient[endpoint=" + endpoint + ", model=" + model + ", apiKey=" + (apiKey == null ? "none" : "set")
                + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout
                + ", maxAttempts=" + maxAttempts + ", retryBudget=" + retryBudget + ", backoffBase=" + backoffBase
                + ", backoffCap=" + backoffCap + ", maxRetryAfter=" + maxRetryAfter + ", maxConnections="
                + maxConnections + ", ioThreads=" + ioThreads + (closed ? ", closed" : "") + "]";
    }

    private String abandonedText(int attempts, String lastFailure) {
        return call() + " (model " + model + ") abandoned after " + attempts(attempts) + ": the client was closed"
                + (lastFailure == null ? "" : "; last failure: " + lastFailure);
    }

    /**
     * One call: its attempts one after another, each an {@link Exchange}, and the waits between
     * them on the timer. State changes are made under its monitor, so that a cancel, a close,
     * an attempt's end and a retry's start cannot cross.
     */
    private final class Call extends CompletableFuture<ModelResponse> {
        /** The model this call asks for; what its messages name. */
        private final String model;
        private final byte[] body;
        private final long start = System.nanoTime();
        private final long deadline = start + retryBudget.toNanos();
        /** Guarded by this: attempts started. */
        private int attempts;
        /** Guarded by this: the attempt in flight, or null. */
        private Exchange exchange;
        /** Guarded by this: the wait for the next attempt, or null. */
        private ScheduledFuture<?> retry;
        /** Guarded by this: why the last attempt failed, for the message of a close. */
        private String lastFailure;

        Call(String model, byte[] body) {
            this.model = model;
            this.body = body;
        }

        /** Starts the next attempt, unless the call is over. On the caller's thread, then the timer's. */
        void next() {
            Exchange x;
            int attempt;
            synchronized (this) {
                if (isDone()) {
                    return;
                }
                attempt = ++attempts;
                retry = null;
                long remaining = deadline - System.nanoTime();
                Duration timeout = remaining < requestTimeout.toNanos() ? Duration.ofNanos(Math.max(remaining, 1))
                        : requestTimeout;
                x = new Exchange(timeout);
                exchange = x;
            }
            x.whenComplete((answer, failure) -> attempted(attempt, x, answer, failure));
            x.start(request("POST", endpoint, body));
        }

        /** An attempt ended: succeed, fail, or wait for the next one. */
        private void attempted(int attempt, Exchange x, Answer answer, Throwable failure) {
            if (isDone()) {
                return;
            }
            AttemptFailure f;
            if (failure == null) {
                try {
                    ModelResponse r = answer(answer, model);
                    long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    if (attempt > 1) {
                        log.info("{} (model {}) succeeded on attempt {} after {}", call(), model, attempt,
                                Texts.millis(latencyMs));
                    }
                    complete(new ModelResponse(r.text(), r.finishReason(), r.model(), r.usage(), latencyMs));
                    return;
                } catch (AttemptFailure e) {
                    f = e;
                } catch (RuntimeException e) {
                    completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed"
                            + " unexpectedly reading the answer: " + e), e));
                    return;
                }
            } else {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof CancellationException) {
                    // Only this call cancels its exchanges, once it is over; or the client closed.
                    completeExceptionally(new WorkerException(redact(abandonedText(attempt, null)), cause));
                    return;
                }
                f = cause instanceof TimeoutException
                        ? new AttemptFailure(FailureScope.TRANSIENT, "request timed out after "
                                + Texts.duration(x.timeout), null, null)
                        : transportFailure(cause, x.timeout);
            }
            failed(attempt, f);
        }

        private void failed(int attempt, AttemptFailure failure) {
            long elapsedNanos = System.nanoTime() - start;
            if (failure.scope == FailureScope.WORKER) {
                // The description is a whole sentence saying what to check: it ends up in the
                // coordinator's line about this worker.
                completeExceptionally(new WorkerFaultException(redact(failure.description), failure.getCause()));
                return;
            }
            if (failure.scope == FailureScope.JOB) {
                // Status and the server's words first: this text is what a failed answer stores
                // and what the run's summary quotes.
                completeExceptionally(new JobFailedException(redact(failure.description + ", from " + call()
                        + " (model " + model + "); not retried, the request would fail the same way again"),
                        failure.getCause()));
                return;
            }
            if (!failure.retryHere) {
                completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed with "
                        + failure.description), failure.getCause()));
                return;
            }
            if (attempt >= maxAttempts) {
                completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed after "
                        + attempts(attempt) + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                        + ", retries exhausted; last failure: " + failure.description), failure.getCause()));
                return;
            }
            if (closed) {
                completeExceptionally(new WorkerException(redact(abandonedText(attempt, failure.description)),
                        failure.getCause()));
                return;
            }
            Duration delay = delay(attempt, failure);
            if (System.nanoTime() + delay.toNanos() >= deadline) {
                completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed after "
                        + attempts(attempt) + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                        + ", retry budget of " + Texts.duration(retryBudget) + " exhausted (next retry was due in "
                        + Texts.duration(delay) + "); last failure: " + failure.description), failure.getCause()));
                return;
            }
            log.warn("{} (model {}) attempt {} of {} failed: {}; retrying in {}", call(), model, attempt,
                    maxAttempts, redact(failure.description), Texts.duration(delay));
            synchronized (this) {
                if (isDone()) {
                    return;
                }
                lastFailure = failure.description;
                exchange = null;
                try {
                    retry = timer.schedule(this::next, delay.toNanos(), TimeUnit.NANOSECONDS);
                    return;
                } catch (RejectedExecutionException e) {
                    // The client closed while this attempt ended: fail below, outside the lock.
                }
            }
            completeExceptionally(new WorkerException(redact(abandonedText(attempt, failure.description)),
                    failure.getCause()));
        }

        /** Fails the call because the client is closing. */
        void abandon() {
            int attempt;
            String last;
            synchronized (this) {
                attempt = attempts;
                last = lastFailure;
            }
            completeExceptionally(new WorkerException(redact(abandonedText(attempt, last))));
        }

        @Override
        public boolean complete(ModelResponse value) {
            boolean done = super.complete(value);
            if (done) {
                over();
            }
            return done;
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            boolean done = super.completeExceptionally(ex);
            if (done) {
                over();
            }
            return done;
        }

        /** Cancels the call: aborts its attempt in flight, or its wait for the next one. */
        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean done = super.cancel(mayInterruptIfRunning);
            if (done) {
                over();
            }
            return done;
        }

        /** The call is over, however it ended: nothing of it may go on. */
        private void over() {
            Exchange x;
            ScheduledFuture<?> r;
            synchronized (this) {
                x = exchange;
                r = retry;
                exchange = null;
                retry = null;
            }
            if (r != null) {
                r.cancel(false);
            }
            if (x != null) {
                // A no-op when the attempt is what ended the call.
                x.cancel(true);
            }
            live.remove(this);
        }
    }

    /**
     * One HTTP exchange, bounded by its timeout on the timer thread: Apache HttpClient's callback
     * completes it. Whichever comes first of the answer, a failure, the timeout and a cancel
     * settles it, and a settled exchange stops its timer and, unless it was answered, aborts the
     * exchange: its connection, if it has one, is closed at once and leaves the pool, and the
     * exchange goes no further.
     */
    final class Exchange extends CompletableFuture<Answer> implements FutureCallback<Message<HttpResponse, byte[]>> {
        final Duration timeout;
        /** Guarded by this: Apache's handle on the exchange, once started. */
        private Future<?> inFlight;
        /**
         * Guarded by this: what holds the exchange's connection, from the moment Apache's exec
         * chain reaches {@link #abortable}; what an abort closes.
         */
        private AbortableExecRuntime runtime;
        /** Guarded by this: the timeout, once scheduled. */
        private ScheduledFuture<?> deadline;

        Exchange(Duration timeout) {
            this.timeout = timeout;
        }

        void start(AsyncRequestProducer request) {
            if (isDone()) {
                return;
            }
            ScheduledFuture<?> t;
            try {
                t = timer.schedule(this::timedOut, timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                completeExceptionally(new CancellationException("the model client is closed"));
                return;
            }
            synchronized (this) {
                if (!isDone()) {
                    deadline = t;
                    t = null;
                }
            }
            if (t != null) {
                // Cancelled while the timeout was being scheduled: it has nothing left to end.
                t.cancel(false);
                return;
            }
            HttpClientContext context = HttpClientContext.create();
            context.setAttribute(EXCHANGE, this);
            Future<?> f;
            try {
                f = http.execute(request, new PooledFirstConsumer(), context, this);
            } catch (RuntimeException e) {
                failed(e);
                return;
            }
            boolean settled;
            synchronized (this) {
                settled = isDone();
                if (!settled) {
                    inFlight = f;
                }
            }
            if (settled) {
                // Timed out or cancelled before Apache answered the call: abort what it started.
                f.cancel(true);
            }
        }

        /**
         * Apache's exec chain reached the lease of a connection: {@code r} holds it from now on.
         * On the thread that started the exchange.
         */
        void attach(AbortableExecRuntime r) {
            synchronized (this) {
                if (!isDone()) {
                    runtime = r;
                    return;
                }
            }
            // Settled while Apache was starting it: nothing of it may go on.
            r.abort();
        }

        private void timedOut() {
            completeExceptionally(new TimeoutException("no complete answer within " + Texts.duration(timeout)));
        }

        @Override
        public void completed(Message<HttpResponse, byte[]> message) {
            Answer answer;
            try {
                answer = new Answer(message);
            } catch (RuntimeException e) {
                completeExceptionally(e);
                return;
            }
            complete(answer);
        }

        @Override
        public void failed(Exception ex) {
            completeExceptionally(ex);
        }

        @Override
        public void cancelled() {
            completeExceptionally(new CancellationException("the exchange was cancelled"));
        }

        @Override
        public boolean complete(Answer value) {
            boolean done = super.complete(value);
            if (done) {
                settle(false);
            }
            return done;
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            boolean done = super.completeExceptionally(ex);
            if (done) {
                settle(true);
            }
            return done;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean done = super.cancel(mayInterruptIfRunning);
            if (done) {
                settle(true);
            }
            return done;
        }

        private void settle(boolean abort) {
            Future<?> f;
            ScheduledFuture<?> t;
            AbortableExecRuntime r;
            synchronized (this) {
                f = inFlight;
                t = deadline;
                r = runtime;
                inFlight = null;
                deadline = null;
                runtime = null;
            }
            if (t != null) {
                t.cancel(false);
            }
            if (abort) {
                if (f != null) {
                    // Ends a wait for a connection; Apache's future says it was cancelled either way.
                    f.cancel(true);
                }
                if (r != null) {
                    // Closes the connection even when Apache's cancel aborted nothing.
                    r.abort();
                }
            }
        }
    }

    /**
     * Apache HttpClient's {@link BasicResponseConsumer} buffering the body as bytes, except that
     * it hands the answer over only when Apache releases it, which Apache does just after putting
     * the connection back in the pool. Apache would otherwise complete an exchange before that,
     * and the call a vignette chains from that completion would find the connection still taken
     * and open another one: two connections per job instead of one.
     */
    private static final class PooledFirstConsumer implements AsyncResponseConsumer<Message<HttpResponse, byte[]>> {
        private final BasicResponseConsumer<byte[]> buffered = new BasicResponseConsumer<>(
                new BasicAsyncEntityConsumer());
        /** The answer and whom to give it to, between the end of the body and the release. */
        private volatile Message<HttpResponse, byte[]> answer;
        private volatile FutureCallback<Message<HttpResponse, byte[]>> recipient;

        @Override
        public void consumeResponse(HttpResponse response, EntityDetails entityDetails, HttpContext context,
                                    FutureCallback<Message<HttpResponse, byte[]>> resultCallback)
                throws HttpException, IOException {
            buffered.consumeResponse(response, entityDetails, context, new FutureCallback<>() {
                @Override
                public void completed(Message<HttpResponse, byte[]> result) {
                    recipient = resultCallback;
                    answer = result;
                }

                @Override
                public void failed(Exception ex) {
                    resultCallback.failed(ex);
                }

                @Override
                public void cancelled() {
                    resultCallback.cancelled();
                }
            });
        }

        @Override
        public void informationResponse(HttpResponse response, HttpContext context)
                throws HttpException, IOException {
            buffered.informationResponse(response, context);
        }

        @Override
        public void updateCapacity(CapacityChannel capacityChannel) throws IOException {
            buffered.updateCapacity(capacityChannel);
        }

        @Override
        public void consume(ByteBuffer src) throws IOException {
            buffered.consume(src);
        }

        @Override
        public void streamEnd(List<? extends Header> trailers) throws HttpException, IOException {
            buffered.streamEnd(trailers);
        }

        @Override
        public void failed(Exception cause) {
            buffered.failed(cause);
        }

        @Override
        public void releaseResources() {
            buffered.releaseResources();
            Message<HttpResponse, byte[]> a = answer;
            FutureCallback<Message<HttpResponse, byte[]>> r = recipient;
            answer = null;
            recipient = null;
            if (a != null && r != null) {
                r.completed(a);
            }
        }
    }

    /**
     * An HTTP answer as this package reads it: status, headers and the body as text (in the
     * charset of its Content-Type, UTF-8 by default).
     */
    static final class Answer {
        private final HttpResponse head;
        private final String body;

        Answer(Message<HttpResponse, byte[]> message) {
            this.head = message.getHead();
            byte[] bytes = message.getBody();
            Charset charset = StandardCharsets.UTF_8;
            Header type = head.getFirstHeader("Content-Type");
            if (type != null) {
                try {
                    Charset declared = ContentType.parse(type.getValue()).getCharset();
                    if (declared != null) {
                        charset = declared;
                    }
                } catch (RuntimeException e) {
                    // An unknown or malformed charset: JSON is UTF-8 anyway.
                }
            }
            this.body = bytes == null ? "" : new String(bytes, charset);
        }

        int status() {
            return head.getCode();
        }

        String body() {
            return body;
        }

        /** The first value of a header, by case-insensitive name. */
        Optional<String> header(String name) {
            Header h = head.getFirstHeader(name);
            return h == null ? Optional.empty() : Optional.ofNullable(h.getValue());
        }
    }

    /**
     * {@code Authorization: Bearer <key>}, which Apache HttpClient writes by its name and value
     * and which prints, in its header log at DEBUG, as {@code Authorization: Bearer [REDACTED]}.
     */
    static final class AuthorizationHeader implements Header {
        private final String value;

        AuthorizationHeader(String apiKey) {
            this.value = "Bearer " + apiKey;
        }

        @Override
        public String getName() {
            return "Authorization";
        }

        @Override
        public String getValue() {
            return value;
        }

        @Override
        public boolean isSensitive() {
            return true;
        }

        @Override
        public String toString() {
            return "Authorization: Bearer " + MASK;
        }
    }

    /**
     * Apache HttpClient's pool, except that new connections are opened on the timer thread: the
     * JDK resolves the host name by blocking, and opening a connection starts where a call
     * starts, on the caller's thread or an I/O thread, neither of which may block.
     */
    private static final class ConnectionManager extends PoolingAsyncClientConnectionManager {
        private final ScheduledThreadPoolExecutor opener;

        ConnectionManager(TlsStrategy tls, ScheduledThreadPoolExecutor opener) {
            super(RegistryBuilder.<TlsStrategy>create().register(URIScheme.HTTPS.id, tls).build(),
                    PoolConcurrencyPolicy.STRICT, PoolReusePolicy.LIFO, TimeValue.NEG_ONE_MILLISECOND, null, null);
            this.opener = opener;
        }

        @Override
        public Future<AsyncConnectionEndpoint> connect(AsyncConnectionEndpoint endpoint,
                                                       ConnectionInitiator initiator, Timeout connectTimeout,
                                                       Object attachment, HttpContext context,
                                                       FutureCallback<AsyncConnectionEndpoint> callback) {
            ComplexFuture<AsyncConnectionEndpoint> result = new ComplexFuture<>(callback);
            try {
                opener.execute(() -> {
                    if (result.isDone()) {
                        return;
                    }
                    try {
                        result.setDependency(super.connect(endpoint, initiator, connectTimeout, attachment, context,
                                new FutureCallback<>() {
                                    @Override
                                    public void completed(AsyncConnectionEndpoint connected) {
                                        result.completed(connected);
                                    }

                                    @Override
                                    public void failed(Exception ex) {
                                        result.failed(ex);
                                    }

                                    @Override
                                    public void cancelled() {
                                        result.cancel();
                                    }
                                }));
                    } catch (RuntimeException e) {
                        result.failed(e);
                    }
                });
            } catch (RejectedExecutionException e) {
                result.failed(new IOException("the model client is closed", e));
            }
            return result;
        }
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
         * The most connections kept to the endpoint, in use and idle together, and so the most
         * calls on the wire at once; calls beyond it wait for a connection (within their request
         * timeout). At least 1; default 256. A worker gives its capacity.
         */
        public Builder maxConnections(int maxConnections) {
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be at least 1, got " + maxConnections);
            }
            this.maxConnections = maxConnections;
            return this;
        }

        /**
         * The I/O threads doing the network work and completing the calls; at least 1, at most
         * 64; default 1. The client's threads are these plus two (see the class documentation),
         * whatever the calls in flight.
         */
        public Builder ioThreads(int ioThreads) {
            if (ioThreads < 1 || ioThreads > 64) {
                throw new IllegalArgumentException("ioThreads must be between 1 and 64, got " + ioThreads);
            }
            this.ioThreads = ioThreads;
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
    }
}
