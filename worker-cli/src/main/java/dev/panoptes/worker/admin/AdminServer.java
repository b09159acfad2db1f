package dev.panoptes.worker.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The admin HTTP endpoint of a coordinator or a worker, on the JDK's {@link HttpServer}:
 * <ul>
 *   <li>{@code GET /metrics}: the registry in the Prometheus text format, open to anyone who can
 *       reach the address (scrapers rarely carry secrets: bind it to 127.0.0.1, the default, or
 *       to a network only the scraper reaches);</li>
 *   <li>{@code GET /status} (coordinator only): the run and its workers as JSON; when a token is
 *       set, only with {@code Authorization: Bearer <token>} (compared in constant time), else
 *       401.</li>
 * </ul>
 *
 * <p><b>Threads.</b> Requests are served one at a time on one daemon thread of its own
 * ({@code panoptes-admin}); a scrape never runs on an I/O thread of the worker server or session.
 * {@link #close()} stops it and releases the port; any thread.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrometheusMeterRegistry registry;
    private final Supplier<String> status;
    private final byte[] expectedAuthorization;

    private AdminServer(HttpServer server, ExecutorService executor, PrometheusMeterRegistry registry,
                        Supplier<String> status, String token) {
        this.server = server;
        this.executor = executor;
        this.registry = registry;
        this.status = status;
        this.expectedAuthorization = token == null ? null
                : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Binds {@code bind} and starts serving.
     *
     * @param status the JSON of {@code /status}, computed per request; null for no status view
     * @param token  the secret {@code /status} requires, or null for none
     * @throws IOException when the address cannot be bound
     */
    public static AdminServer start(InetSocketAddress bind, PrometheusMeterRegistry registry, Supplier<String> status,
                                    String token) throws IOException {
        Objects.requireNonNull(bind, "bind");
        Objects.requireNonNull(registry, "registry");
        HttpServer server;
        try {
            // Command-line addresses arrive unresolved; the server needs a resolved one.
            InetSocketAddress resolved = bind.isUnresolved() ? new InetSocketAddress(bind.getHostString(), bind.getPort())
                    : bind;
            if (resolved.isUnresolved()) {
                throw new IOException("cannot resolve host '" + bind.getHostString() + "'");
            }
            server = HttpServer.create(resolved, 16);
        } catch (IOException e) {
            throw new IOException("cannot serve metrics on " + bind.getHostString() + ":" + bind.getPort() + ": "
                    + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "panoptes-admin");
            t.setDaemon(true);
            return t;
        });
        AdminServer admin = new AdminServer(server, executor, registry, status, token);
        server.setExecutor(executor);
        server.createContext("/", admin::handle);
        server.start();
        log.info("admin endpoint on http://{}:{}/ (metrics{})", admin.address().getHostString(),
                admin.address().getPort(), status == null ? "" : ", status");
        return admin;
    }

    /** The bound address (with the real port when port 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** Stops serving and releases the port; idempotent. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(2, TimeUnit.SECONDS)) {
                log.warn("the admin endpoint's thread did not stop within 2000 ms; leaving it (daemon)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            String path = exchange.getRequestURI().getPath();
            boolean known = path.equals("/metrics") || (status != null && path.equals("/status"));
            if (!known) {
                send(exchange, 404, "text/plain; charset=utf-8", "not found: try /metrics"
                        + (status == null ? "" : " or /status") + "\n");
                return;
            }
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, 405, "text/plain; charset=utf-8", "only GET\n");
                return;
            }
            if (path.equals("/metrics")) {
                send(exchange, 200, PROMETHEUS_TEXT, registry.scrape());
            } else if (!authorized(exchange)) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"panoptes\"");
                send(exchange, 401, "text/plain; charset=utf-8", "the status view needs the coordinator's token:"
                        + " Authorization: Bearer <token>\n");
            } else {
                send(exchange, 200, "application/json", status.get());
            }
        } catch (RuntimeException e) {
            log.warn("the admin endpoint failed to answer {} {}; carrying on", exchange.getRequestMethod(),
                    exchange.getRequestURI(), e);
            throw e;
        } finally {
            exchange.close();
        }
    }

    private boolean authorized(HttpExchange exchange) {
        if (expectedAuthorization == null) {
            return true;
        }
        String given = exchange.getRequestHeaders().getFirst("Authorization");
        // MessageDigest.isEqual takes time independent of where the bytes differ.
        return given != null && MessageDigest.isEqual(expectedAuthorization, given.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int code, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(code, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }
}
