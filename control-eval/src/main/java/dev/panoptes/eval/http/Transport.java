package dev.panoptes.eval.http;

import dev.panoptes.control.DaemonThreads;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.AsyncRequestProducer;
import org.apache.hc.core5.http.message.BasicHeader;
import org.apache.hc.core5.http.message.BasicHttpRequest;
import org.apache.hc.core5.http.nio.entity.BasicAsyncEntityProducer;
import org.apache.hc.core5.http.nio.support.BasicRequestProducer;
import org.apache.hc.core5.net.URIAuthority;
import org.apache.hc.core5.http.nio.ssl.TlsStrategy;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads and connections of one {@link HttpModelClient}: Apache HttpClient 5's
 * asynchronous client with its pool ({@link ConnectionManager}), and the timer. It starts
 * {@link Exchange exchanges} with the headers every request carries, and it alone knows how
 * Apache is configured (HTTP/1.1 only, no retries, redirects, cookies, authentication or wire log of
 * its own).
 *
 * <p>Threads, a fixed number whatever the exchanges in flight: {@code ioThreads} I/O threads
 * ({@code model-client-<n>-io-<i>}, default 1) do all the network work and complete the
 * exchanges; one timer thread ({@code model-client-<n>-timer}) runs every attempt timeout and
 * every wait before a retry, and opens every new connection, because the JDK resolves host
 * names by blocking. Every method may be called from any thread; {@link #close()} only from one
 * of the caller's, never from an I/O thread, since it waits for them to stop.
 */
final class Transport {
    private static final Logger log = LoggerFactory.getLogger(HttpModelClient.class);
    /**
     * A request body's type, as a header made once: Apache's entity producer would format its
     * {@code ContentType} into a new String for every request.
     */
    private static final Header JSON = new BasicHeader("Content-Type", "application/json");
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

    private final String threadPrefix = "model-client-" + CLIENTS.incrementAndGet();
    /** The headers every request carries: Accept and, with a key, Authorization. */
    private final Header[] headers;
    /** {@link #headers} and the JSON body's Content-Type, for requests with a body. */
    private final Header[] bodyHeaders;
    /** The URIs requests were sent to, taken apart. */
    private final ConcurrentHashMap<URI, Target> targets = new ConcurrentHashMap<>();
    /** Timeouts, retry waits and new connections; one thread. */
    private final ScheduledThreadPoolExecutor timer;
    /** Built at start for an https API, else by the first connection that needs TLS, if any. */
    private final LazyTlsStrategy tls;
    /** The pool of {@link #http}, for its statistics. */
    private final ConnectionManager connections;
    private final CloseableHttpAsyncClient http;
    /** The JVM's proxy settings, asked once per endpoint and settings. */
    private final ProxyRoutes routes = new ProxyRoutes();
    private volatile boolean closed;

    /**
     * Starts the threads.
     *
     * @param apiKey the key sent with every request, or null for none
     * @param ssl    the TLS context for https, or null for the JVM's default
     * @param https  whether the API is https: its TLS context is then built now (an unusable
     *               trust store fails here, with {@link IllegalStateException}), else only if a
     *               connection ever needs it
     */
    Transport(String apiKey, Duration connectTimeout, Duration requestTimeout, int maxConnections, int ioThreads,
              SSLContext ssl, boolean https) {
        Header accept = new BasicHeader("Accept", "application/json");
        this.headers = apiKey == null ? new Header[] {accept} : new Header[] {accept, new AuthorizationHeader(apiKey)};
        this.bodyHeaders = Arrays.copyOf(headers, headers.length + 1);
        bodyHeaders[headers.length] = JSON;
        this.timer = new ScheduledThreadPoolExecutor(1, daemons(threadPrefix + "-timer", false));
        // Every attempt schedules its timeout and nearly every one cancels it: without this the
        // queue would hold each cancelled timeout until it was due.
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timer.prestartAllCoreThreads();

        this.tls = new LazyTlsStrategy(() -> ClientTlsStrategyBuilder.create()
                .setSslContext(ssl != null ? ssl : defaultTls()).buildAsync());
        if (https) {
            tls.strategy();
        }
        Timeout socketTimeout = Timeout.of(requestTimeout.plus(SOCKET_TIMEOUT_MARGIN));
        this.connections = new ConnectionManager(this.tls, timer);
        connections.setMaxTotal(maxConnections);
        connections.setDefaultMaxPerRoute(maxConnections);
        connections.setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.of(connectTimeout))
                .setSocketTimeout(socketTimeout)
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
                .setRoutePlanner(routes)
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
                        .setResponseTimeout(socketTimeout)
                        // A call waiting for a free connection waits within its attempt's timeout.
                        .setConnectionRequestTimeout(socketTimeout)
                        .build())
                // Before the connection is leased: from there on an Exchange can abort it.
                .addExecInterceptorBefore(ChainElement.CONNECT.name(), "abortable-exchange", Transport::abortable)
                // No authentication, so none of the per-request work Apache's protocol step does
                // for it (see PlainProtocol).
                .replaceExecInterceptor(ChainElement.PROTOCOL.name(), PlainProtocol.INSTANCE)
                // Retries and redirects are the Call's business: Apache's would retry behind the
                // failure policy's back.
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

    private static SSLContext defaultTls() {
        try {
            return SSLContext.getDefault();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no default TLS context", e);
        }
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
        return numbered ? DaemonThreads.numbered(name) : DaemonThreads.named(n -> name);
    }

    /**
     * Starts one exchange: {@code method} to {@code uri} with the headers every request carries
     * and, unless null, a JSON body. Never blocks.
     *
     * @param timeout how long the whole exchange may take; then it fails with a
     *                {@link java.util.concurrent.TimeoutException} and its connection is closed
     */
    Exchange send(String method, URI uri, byte[] body, Duration timeout) {
        Exchange x = new Exchange(this, timeout);
        x.start(request(method, uri, body));
        return x;
    }

    /** A request with the headers every call carries: Accept and, when set, the key. */
    AsyncRequestProducer request(String method, URI uri, byte[] body) {
        Target t = targets.computeIfAbsent(uri, Target::new);
        BasicHttpRequest request = new BasicHttpRequest(method, t.scheme, t.authority, t.path);
        if (body == null) {
            request.setHeaders(headers);
            return new BasicRequestProducer(request, null);
        }
        // No ContentType on the entity: the request carries the header already (bodyHeaders).
        request.setHeaders(bodyHeaders);
        return new BasicRequestProducer(request, new BasicAsyncEntityProducer(body, null));
    }

    /**
     * What a request takes from its URI, taken apart once per URI (a client posts to one or two)
     * rather than once per request, as Apache's request builder would.
     */
    private static final class Target {
        final String scheme;
        final URIAuthority authority;
        final String path;

        Target(URI uri) {
            this.scheme = uri.getScheme();
            this.authority = new URIAuthority(uri.getRawUserInfo(), uri.getHost(), uri.getPort());
            String p = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            this.path = uri.getRawQuery() == null ? p : p + "?" + uri.getRawQuery();
        }
    }

    /** Hands {@code x}'s request to Apache, whose callback completes {@code x}. */
    Future<?> execute(AsyncRequestProducer request, Exchange x) {
        HttpClientContext context = HttpClientContext.create();
        context.setAttribute(EXCHANGE, x);
        return http.execute(request, new PooledFirstConsumer(), context, x);
    }

    /**
     * Runs {@code task} on the timer thread after {@code delay}.
     *
     * @throws java.util.concurrent.RejectedExecutionException once closed
     */
    ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        return timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Tasks waiting on the timer thread: attempt timeouts and retry waits. */
    int pendingTimers() {
        return timer.getQueue().size();
    }

    /** Whether a connection has needed TLS yet (the TLS context is built then). */
    boolean tlsBuilt() {
        return tls.built();
    }

    /** Pooled connections leased to an exchange (in use, not idle in the pool). */
    int leasedConnections() {
        return connections.getTotalStats().getLeased();
    }

    /** The route planner, for tests. */
    ProxyRoutes routes() {
        return routes;
    }

    /** The prefix of the thread names, {@code model-client-<n>}. */
    String threadPrefix() {
        return threadPrefix;
    }

    /**
     * Closes every connection at once and ends the threads; exchanges in flight fail. Waits for
     * the I/O threads to stop (a few seconds at most). Idempotent in effect.
     */
    void close() {
        closed = true;
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
}
