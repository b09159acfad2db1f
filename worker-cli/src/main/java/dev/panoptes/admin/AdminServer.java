package dev.panoptes.admin;

import dev.panoptes.control.DaemonThreads;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The admin HTTP endpoint of a coordinator or a worker (docs/OPERATIONS.md, "Metrics"):
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
 * <p><b>Threads and slow clients.</b> One acceptor thread ({@code panoptes-admin-accept}) hands
 * each connection to a small bounded pool ({@code panoptes-admin-N}, {@value #THREADS} threads,
 * {@value #QUEUE} connections waiting at most; beyond that a connection is answered 503 at
 * once). Each connection has a deadline ({@link #REQUEST_TIMEOUT} from when it was accepted) to
 * send its request and read the answer, after which it is closed: a client that sends half a
 * request, or reads the answer slowly, holds one thread for that long at most, and others are
 * served meanwhile. One request per connection ({@code Connection: close}). A scrape never
 * runs on an I/O thread of the worker server or session. {@link #close()} stops it all and
 * releases the port; any thread.
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

    private final ServerSocket listener;
    private final InetSocketAddress address;
    private final PrometheusMeterRegistry registry;
    private final Supplier<String> status;
    private final byte[] expectedAuthorization;
    private final long timeoutMs;
    private final ThreadPoolExecutor pool;
    private final ScheduledThreadPoolExecutor deadlines;
    private final Thread acceptor;
    /** Connections accepted and not closed yet: the acceptor adds, a pool thread removes, {@link #close()} closes. */
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private AdminServer(ServerSocket listener, PrometheusMeterRegistry registry, Supplier<String> status,
                        String token, Limits limits) {
        this.listener = listener;
        this.address = literal((InetSocketAddress) listener.getLocalSocketAddress());
        this.registry = registry;
        this.status = status;
        this.expectedAuthorization = token == null ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        this.timeoutMs = limits.requestTimeout().toMillis();
        BlockingQueue<Runnable> waiting = limits.queue() == 0 ? new SynchronousQueue<>()
                : new ArrayBlockingQueue<>(limits.queue());
        this.pool = new ThreadPoolExecutor(limits.threads(), limits.threads(), 30, TimeUnit.SECONDS, waiting,
                daemons("panoptes-admin-"));
        // An idle endpoint keeps no serving thread.
        pool.allowCoreThreadTimeOut(true);
        this.deadlines = new ScheduledThreadPoolExecutor(1, daemons("panoptes-admin-deadline-"));
        deadlines.setRemoveOnCancelPolicy(true);
        this.acceptor = new Thread(this::acceptLoop, "panoptes-admin-accept");
        acceptor.setDaemon(true);
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
        ServerSocket listener = new ServerSocket();
        try {
            // A restarted coordinator rebinds its port while the last run's connections linger.
            listener.setReuseAddress(true);
            listener.bind(resolved, 50);
        } catch (IOException e) {
            listener.close();
            throw new IOException("cannot serve metrics on " + hostPort(bind) + ": " + e.getMessage(), e);
        }
        AdminServer admin = new AdminServer(listener, registry, status, token, limits);
        admin.acceptor.start();
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
    public void close() {
        closed = true;
        closeQuietly(listener);
        pool.shutdownNow();
        // Blocking socket I/O ignores interrupts: closing the sockets is what frees the threads.
        for (Socket s : open) {
            closeQuietly(s);
        }
        deadlines.shutdownNow();
        try {
            acceptor.join(2000);
            if (!pool.awaitTermination(2, TimeUnit.SECONDS)) {
                log.warn("the admin endpoint's threads did not stop within 2000 ms; leaving them (daemons)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ acceptor thread

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // Out of file descriptors, most likely: pause rather than spin on it.
                log.warn("the admin endpoint could not accept a connection: {}; trying again in 100 ms", e.toString());
                try {
                    Thread.sleep(100);
                } catch (InterruptedException interrupted) {
                    return;
                }
                continue;
            }
            open.add(socket);
            ScheduledFuture<?> deadline = null;
            try {
                deadline = deadlines.schedule(() -> cutOff(socket), timeoutMs, TimeUnit.MILLISECONDS);
                ScheduledFuture<?> ours = deadline;
                pool.execute(() -> serve(socket, ours));
            } catch (RejectedExecutionException e) {
                if (deadline != null) {
                    deadline.cancel(false);
                }
                if (!closed) {
                    busy(socket);
                }
                release(socket);
            }
        }
    }

    /** Every thread is busy and the queue full: say so at once rather than keep the client waiting. */
    private void busy(Socket socket) {
        log.debug("the admin endpoint is busy ({} requests being served, {} waiting): answered 503 to {}",
                pool.getActiveCount(), pool.getQueue().size(), socket.getRemoteSocketAddress());
        try {
            // A few bytes into an empty send buffer: this does not block.
            socket.getOutputStream().write(head(503, PLAIN, 0, "Retry-After: 1\r\n"));
            socket.shutdownOutput();
        } catch (IOException e) {
            log.debug("could not tell {} that the admin endpoint is busy: {}", socket.getRemoteSocketAddress(),
                    e.toString());
        }
    }

    // ------------------------------------------------------------------ deadline thread

    private void cutOff(Socket socket) {
        if (open.contains(socket)) {
            log.debug("closing the admin connection from {}: it took longer than {} ms to send its request and read"
                    + " the answer", socket.getRemoteSocketAddress(), timeoutMs);
            closeQuietly(socket);
        }
    }

    // ------------------------------------------------------------------ pool threads

    private void serve(Socket socket, ScheduledFuture<?> deadline) {
        AdminRequest request = null;
        try {
            // Each read gives up by itself at the deadline too, should the deadline thread be late.
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutMs)));
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            try {
                request = AdminRequest.read(in);
            } catch (AdminRequest.BadRequest e) {
                send(out, e.code, PLAIN, e.getMessage() + "\n", false, "");
                // Part of the request is still unread: closing now would reset the connection, and
                // the client could lose the answer. Let it read, and close its end, first.
                try {
                    socket.shutdownOutput();
                    socket.setSoTimeout(1000);
                    long left = AdminRequest.MAX_BODY_BYTES;
                    for (long n; left > 0 && (n = in.skip(left)) > 0; ) {
                        left -= n;
                    }
                } catch (IOException lingering) {
                    log.trace("the refused admin connection from {} ended: {}", socket.getRemoteSocketAddress(),
                            lingering.toString());
                }
                return;
            }
            answer(request, out);
        } catch (SocketTimeoutException e) {
            log.debug("the admin connection from {} sent no complete request within {} ms; closing it",
                    socket.getRemoteSocketAddress(), timeoutMs);
        } catch (IOException e) {
            log.debug("the admin connection from {} ended early: {}", socket.getRemoteSocketAddress(), e.toString());
        } catch (RuntimeException e) {
            String what = request == null ? "a request" : request.method() + " " + request.path();
            if (closed) {
                log.debug("the admin endpoint stopped while answering {}: {}", what, e.toString());
                return;
            }
            log.warn("the admin endpoint failed to answer {} from {}; carrying on", what,
                    socket.getRemoteSocketAddress(), e);
            try {
                // The body is computed before anything is written: nothing was sent yet.
                send(socket.getOutputStream(), 500, PLAIN, "the admin endpoint failed to answer: " + e
                        + " (the log has the details)\n", false, "");
            } catch (IOException ignored) {
                log.debug("could not send the 500 to {}", socket.getRemoteSocketAddress());
            }
        } finally {
            deadline.cancel(false);
            release(socket);
        }
    }

    private void answer(AdminRequest request, OutputStream out) throws IOException {
        boolean head = request.method().equals("HEAD");
        boolean known = request.path().equals("/metrics") || (status != null && request.path().equals("/status"));
        if (!known) {
            send(out, 404, PLAIN, "not found: try /metrics" + (status == null ? "" : " or /status") + "\n", head, "");
        } else if (!request.method().equals("GET") && !head) {
            send(out, 405, PLAIN, "only GET (and HEAD)\n", false, "Allow: GET, HEAD\r\n");
        } else if (!authorized(request.authorization())) {
            send(out, 401, PLAIN, "the admin endpoint needs the token: send 'Authorization: Bearer <token>' (in"
                    + " a Prometheus scrape config: authorization: {credentials_file: FILE})\n", head,
                    "WWW-Authenticate: Bearer realm=\"panoptes\"\r\n");
        } else if (request.path().equals("/metrics")) {
            send(out, 200, PROMETHEUS_TEXT, registry.scrape(), head, "");
        } else {
            send(out, 200, "application/json", status.get(), head, "");
        }
    }

    private boolean authorized(String given) {
        if (expectedAuthorization == null) {
            return true;
        }
        // MessageDigest.isEqual takes time independent of where the bytes differ.
        return given != null && MessageDigest.isEqual(expectedAuthorization, given.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(OutputStream out, int code, String contentType, String body, boolean head,
                               String extraHeaders) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        out.write(head(code, contentType, bytes.length, extraHeaders));
        if (!head) {
            out.write(bytes);
        }
        out.flush();
    }

    private static byte[] head(int code, String contentType, int length, String extraHeaders) {
        return ("HTTP/1.1 " + code + " " + reason(code) + "\r\n"
                + "Content-Type: " + contentType + "\r\n"
                + "Content-Length: " + length + "\r\n"
                + "Cache-Control: no-store\r\n"
                + "Connection: close\r\n"
                + extraHeaders
                + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    private static String reason(int code) {
        return switch (code) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 500 -> "Internal Server Error";
            case 413 -> "Content Too Large";
            case 431 -> "Request Header Fields Too Large";
            case 503 -> "Service Unavailable";
            case 505 -> "HTTP Version Not Supported";
            default -> "Status " + code;
        };
    }

    // ------------------------------------------------------------------ helpers

    private void release(Socket socket) {
        open.remove(socket);
        closeQuietly(socket);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            log.trace("closing {} failed: {}", closeable, e.toString());
        }
    }

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

    private static ThreadFactory daemons(String prefix) {
        return DaemonThreads.named(n -> prefix + (n + 1));
    }
}
