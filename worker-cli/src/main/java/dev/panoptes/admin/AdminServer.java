package dev.panoptes.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.panoptes.control.DaemonThreads;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The admin HTTP endpoint of a coordinator or a worker (docs/OPERATIONS.md, "Metrics"), served by
 * the JDK's built-in HTTP server ({@code com.sun.net.httpserver}, as the stub model API is):
 * <ul>
 *   <li>{@code GET /metrics}: the registry in the Prometheus text format;</li>
 *   <li>{@code GET /status} (coordinator only): the run and its workers as JSON.</li>
 * </ul>
 *
 * <p><b>Who may read it.</b> With a token (the coordinator's {@code --token}, or the one a worker
 * registers with), every path requires {@code Authorization: Bearer <token>} (compared in
 * constant time), else 401; Prometheus sends it with {@code authorization: {credentials: ...}}
 * in the scrape config. Without a token the endpoint is open, so {@link #start} serves it only on
 * a loopback address, where only this machine reaches it, unless told that an open endpoint on
 * the network is meant ({@code --metrics-insecure}): see {@link #checkExposure}.
 *
 * <p><b>Threads and slow clients.</b> The JDK server's dispatcher thread accepts connections and
 * waits for their first bytes without holding any other thread (a client that connects and sends
 * nothing holds none). Each request is then read, answered and written on a small bounded pool
 * ({@link DeadlineExecutor}: {@value #THREADS} threads, {@value #QUEUE} requests waiting at most;
 * beyond that a request is answered 503 with {@code Retry-After: 1} at once). Each connection has
 * a deadline ({@link #REQUEST_TIMEOUT} from when a thread takes it) to send its request and read
 * the answer, after which it is closed: a client that sends half a request, or reads the answer
 * slowly, holds one thread for that long at most, and others are served meanwhile. One request
 * per connection ({@code Connection: close}). A scrape never runs on an I/O thread of the worker
 * server or session. Every thread is a daemon. {@link #close()} stops it all and releases the
 * port; any thread.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    private static final String PLAIN = "text/plain; charset=utf-8";
    /** Threads that serve requests. */
    static final int THREADS = 4;
    /** Accepted connections that may wait for a thread. */
    static final int QUEUE = 16;
    /** How long a connection may take, from accept to the last byte of the answer. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /** The sizes of the pool and the deadline of a connection; tests shrink them. */
    record Limits(int threads, int queue, Duration requestTimeout) {
        Limits {
            if (threads < 1 || queue < 0 || requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new IllegalArgumentException("admin endpoint limits: threads >= 1, queue >= 0 and a positive"
                        + " timeout, got " + threads + ", " + queue + ", " + requestTimeout);
            }
        }
    }

    private final HttpServer server;
    private final InetSocketAddress address;
    private final PrometheusMeterRegistry registry;
    private final Supplier<String> status;
    private final byte[] expectedAuthorization;
    private final DeadlineExecutor threads;
    private volatile boolean closed;

    private AdminServer(HttpServer server, PrometheusMeterRegistry registry, Supplier<String> status, String token,
                        DeadlineExecutor threads) {
        this.server = server;
        this.address = literal(server.getAddress());
        this.registry = registry;
        this.status = status;
        this.expectedAuthorization = token == null ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        this.threads = threads;
    }

    /**
     * {@link #start(InetSocketAddress, PrometheusMeterRegistry, Supplier, String, boolean)} that
     * refuses to serve without a token beyond loopback.
     */
    public static AdminServer start(InetSocketAddress bind, PrometheusMeterRegistry registry, Supplier<String> status,
                                    String token) throws IOException {
        return start(bind, registry, status, token, false);
    }

    /**
     * Binds {@code bind} and starts serving.
     *
     * @param status            the JSON of {@code /status}, computed per request; null for no status view
     * @param token             the secret every request must carry as {@code Authorization: Bearer}, or
     *                          null for none
     * @param openBeyondLoopback true to serve without a token on an address other machines reach
     *                          ({@code --metrics-insecure}); ignored with a token
     * @throws IllegalArgumentException when there is no token, {@code bind} is not a loopback
     *                                  address and {@code openBeyondLoopback} is false (see
     *                                  {@link #checkExposure})
     * @throws IOException              when the address cannot be resolved or bound
     */
    public static AdminServer start(InetSocketAddress bind, PrometheusMeterRegistry registry, Supplier<String> status,
                                    String token, boolean openBeyondLoopback) throws IOException {
        return start(bind, registry, status, token, openBeyondLoopback,
                new Limits(THREADS, QUEUE, REQUEST_TIMEOUT));
    }

    static AdminServer start(InetSocketAddress bind, PrometheusMeterRegistry registry, Supplier<String> status,
                             String token, boolean openBeyondLoopback, Limits limits) throws IOException {
        Objects.requireNonNull(bind, "bind");
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(limits, "limits");
        InetSocketAddress resolved = resolve(bind);
        if (resolved.isUnresolved()) {
            throw new IOException("cannot serve metrics on " + hostPort(bind) + ": cannot resolve host '"
                    + bind.getHostString() + "'");
        }
        checkExposure(resolved, token != null, openBeyondLoopback);
        HttpServer server;
        try {
            server = HttpServer.create(resolved, 50);
        } catch (IOException e) {
            throw new IOException("cannot serve metrics on " + hostPort(bind) + ": " + e.getMessage(), e);
        }
        DeadlineExecutor threads = new DeadlineExecutor(limits.threads(), limits.queue(), limits.requestTimeout());
        server.setExecutor(threads);
        AdminServer admin = new AdminServer(server, registry, status, token, threads);
        server.createContext("/", admin::handle);
        startOnADaemon(server);
        String paths = status == null ? "metrics" : "metrics, status";
        if (token != null) {
            log.info("admin endpoint on http://{}/ ({}; every request needs the token)", hostPort(admin.address),
                    paths);
        } else if (resolved.getAddress().isLoopbackAddress()) {
            log.info("admin endpoint on http://{}/ ({}; no token: open to this machine only)", hostPort(admin.address),
                    paths);
        } else {
            log.warn("admin endpoint on http://{}/ ({}) is open to anyone who can reach it: no token, and"
                    + " --metrics-insecure", hostPort(admin.address), paths);
        }
        return admin;
    }

    /**
     * The rule for who may reach an endpoint without a token: with a token anyone may try (the
     * token decides); without one, only a loopback address is served, unless
     * {@code openBeyondLoopback}. A host that does not resolve passes here and fails to bind.
     *
     * @param bind the address to serve on, resolved or not (then it is looked up)
     * @throws IllegalArgumentException saying what would be exposed and the three ways out
     */
    public static void checkExposure(InetSocketAddress bind, boolean hasToken, boolean openBeyondLoopback) {
        if (hasToken || openBeyondLoopback) {
            return;
        }
        InetSocketAddress resolved = resolve(bind);
        if (resolved.isUnresolved() || resolved.getAddress().isLoopbackAddress()) {
            return;
        }
        throw new IllegalArgumentException("an admin endpoint on " + hostPort(bind) + " would be open to other"
                + " machines (it is not a loopback address) without authentication, since there is no token. Set a"
                + " token (--token or PANOPTES_TOKEN; scrapers then send 'Authorization: Bearer TOKEN'), or serve it"
                + " on 127.0.0.1, or add --metrics-insecure to serve it open anyway");
    }

    /** The bound address (with the real port when port 0 was asked for). */
    public InetSocketAddress address() {
        return address;
    }

    /** Stops serving, cuts the connections being served and releases the port; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Interrupting the serving threads closes the channels they block on; stop() closes the
        // rest and the port, and waits for the dispatcher.
        threads.shutdownNow();
        server.stop(0);
        try {
            if (!threads.awaitTermination(Duration.ofSeconds(2))) {
                log.warn("the admin endpoint's threads did not stop within 2000 ms; leaving them (daemons)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Starts the server from a daemon thread: the JDK's dispatcher thread takes its daemon status
     * from the thread that starts it, and a non-daemon one would keep the JVM alive past a worker
     * or coordinator that did not close its endpoint.
     */
    private static void startOnADaemon(HttpServer server) throws IOException {
        AtomicReference<RuntimeException> failed = new AtomicReference<>();
        Thread starter = DaemonThreads.named(n -> "panoptes-admin-start").newThread(() -> {
            try {
                server.start();
            } catch (RuntimeException e) {
                failed.set(e);
            }
        });
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            server.stop(0);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the admin endpoint", e);
        }
        if (failed.get() != null) {
            server.stop(0);
            throw failed.get();
        }
    }

    // ------------------------------------------------------------------ serving threads

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            exchange.getRequestBody().close();
            if (DeadlineExecutor.busy()) {
                exchange.getResponseHeaders().set("Retry-After", "1");
                send(exchange, 503, PLAIN, "the admin endpoint is busy; try again in a second\n", false);
                return;
            }
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getPath();
            try {
                answer(exchange, method, path == null ? "" : path);
            } catch (RuntimeException e) {
                if (closed) {
                    log.debug("the admin endpoint stopped while answering {} {}: {}", method, path, e.toString());
                    return;
                }
                log.warn("the admin endpoint failed to answer {} {} from {}; carrying on", method, path,
                        exchange.getRemoteAddress(), e);
                // The body is computed before anything is written: nothing was sent yet.
                send(exchange, 500, PLAIN, "the admin endpoint failed to answer: " + e
                        + " (the log has the details)\n", false);
            }
        } catch (IOException e) {
            log.debug("the admin connection from {} ended early: {}", exchange.getRemoteAddress(), e.toString());
        }
    }

    private void answer(HttpExchange exchange, String method, String path) throws IOException {
        boolean head = method.equals("HEAD");
        boolean known = path.equals("/metrics") || (status != null && path.equals("/status"));
        if (!known) {
            send(exchange, 404, PLAIN, "not found: try /metrics" + (status == null ? "" : " or /status") + "\n", head);
        } else if (!method.equals("GET") && !head) {
            exchange.getResponseHeaders().set("Allow", "GET, HEAD");
            send(exchange, 405, PLAIN, "only GET (and HEAD)\n", false);
        } else if (!authorized(exchange.getRequestHeaders().get("Authorization"))) {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"panoptes\"");
            send(exchange, 401, PLAIN, "the admin endpoint needs the token: send 'Authorization: Bearer <token>' (in"
                    + " a Prometheus scrape config: authorization: {credentials_file: FILE})\n", head);
        } else if (path.equals("/metrics")) {
            send(exchange, 200, PROMETHEUS_TEXT, registry.scrape(), head);
        } else {
            send(exchange, 200, "application/json", status.get(), head);
        }
    }

    private boolean authorized(List<String> given) {
        if (expectedAuthorization == null) {
            return true;
        }
        // One Authorization header; MessageDigest.isEqual takes time independent of where the bytes differ.
        return given != null && given.size() == 1
                && MessageDigest.isEqual(expectedAuthorization, given.get(0).getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int code, String contentType, String body, boolean head)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.getResponseHeaders().set("Connection", "close");
        // -1: no body (a HEAD); the JDK then sends no Content-Length of its own making.
        exchange.sendResponseHeaders(code, head ? -1 : bytes.length == 0 ? -1 : bytes.length);
        if (!head && bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private static InetSocketAddress resolve(InetSocketAddress bind) {
        // Command-line addresses arrive unresolved; binding needs a resolved one.
        return bind.isUnresolved() ? new InetSocketAddress(bind.getHostString(), bind.getPort()) : bind;
    }

    /** The address with its IP as its host string, so that logs and links name the address bound. */
    private static InetSocketAddress literal(InetSocketAddress bound) {
        InetAddress ip = bound.getAddress();
        if (ip instanceof Inet6Address v6 && v6.getScopeId() != 0) {
            return bound;
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip.getAddress()), bound.getPort());
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("the JDK gave a bound address of " + ip.getAddress().length + " bytes", e);
        }
    }

    private static String hostPort(InetSocketAddress a) {
        String host = a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
