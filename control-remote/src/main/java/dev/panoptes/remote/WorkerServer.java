package dev.panoptes.remote;

import dev.panoptes.control.DaemonThreads;
import dev.panoptes.control.Plural;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The coordinator's listening side: accepts worker connections, runs the {@code register}
 * handshake, and keeps a {@link SharedPool} in step with the live workers — each
 * {@link RemoteWorker} is added when it registers and exactly that worker is removed when its
 * connection ends or it drains.
 *
 * <p><b>Threads.</b> {@link ServerOptions#selectorThreads()} selector threads host every
 * connection, each connection pinned to one of them for its life (the first also accepts), and
 * one thread tells the {@link Listener} ({@link ServerEvents}), so that a slow listener never
 * stalls I/O. Dispatch futures are completed by {@link ServerOptions#completionThreads()}
 * completion threads, so that a slow callback never stalls I/O either; or, with
 * {@link ServerOptions#directCompletions()}, on the selector thread that read the answer, for
 * callers whose callbacks never block (the coordinator command's scheduler). Threads do not grow
 * with the number of workers. All are daemon threads named {@code panoptes-remote-<n>-io-<i>},
 * {@code panoptes-remote-<n>-completion-<i>} and {@code panoptes-remote-<n>-events-0}, and with
 * TLS up to two {@code panoptes-remote-<n>-tls-<i>} for handshakes ({@link HandshakeTasks}), which
 * end when idle.
 *
 * <p><b>Failure.</b> If a selector thread dies of an {@link Error} outside any one connection's
 * handling, the server fails as a whole rather than keep a port that nobody serves: it closes
 * (every job pending or queued fails retryably, the port is released), marks its pool failed
 * ({@link SharedPool#failure()}, which stops a {@link dev.panoptes.control.schedule.Scheduler}
 * run over it), and tells {@link Listener#onFailed}.
 *
 * <p>Thread-safe: {@link #address()}, {@link #failure()} and {@link #close()} may be called from
 * any thread.
 */
public final class WorkerServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerServer.class);
    private static final AtomicInteger SERVERS = new AtomicInteger();
    /** Room for a burst of connecting workers: a short backlog makes the kernel drop SYNs, costing seconds. */
    private static final int ACCEPT_BACKLOG = 1024;
    /** How long close() waits for each step (loops, then callbacks) before warning and going on. */
    private static final long SHUTDOWN_STEP_TIMEOUT_MS = 5_000;
    /** Rejection reports that may wait for a slow listener at once; later ones are counted, not queued. */
    static final int MAX_WAITING_REJECTIONS = 1_024;
    /** Threads for TLS handshake tasks: handshakes are CPU work, so no more than the cores, and two at most. */
    private static final int TLS_THREADS = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));

    /**
     * Hears what happens to connections. Called on the server's one events thread, in the order
     * things happened to each worker (registered, then lost), never on a selector thread: a
     * listener that blocks delays only later events, never I/O. The pool is already up to date
     * when a method is called. Exceptions it throws are logged and otherwise ignored. Every
     * method has a no-op default.
     */
    public interface Listener {
        /** A worker registered and was added to the pool. */
        default void onRegistered(RemoteWorker worker) {
        }

        /**
         * A connection never became a worker: its {@code register} was refused (the reason was
         * sent to it in a {@code rejected} frame where the socket allowed), it sent none in time,
         * or it went away first.
         *
         * <p>While {@value WorkerServer#MAX_WAITING_REJECTIONS} reports wait for a listener that
         * is behind, later rejections are counted and logged instead of told.
         *
         * @param remote the peer's address
         * @param reason why, as sent to the peer
         */
        default void onRejected(SocketAddress remote, String reason) {
        }

        /**
         * A registered worker's connection ended and it left the pool; its jobs have been
         * failed retryably.
         *
         * @param cause the first cause of the end: an {@link java.io.EOFException} when the
         *              worker closed, a {@link java.util.concurrent.TimeoutException} when it went
         *              silent, a {@link dev.panoptes.control.ProtocolException}, an
         *              {@link IOException}, or a {@link dev.panoptes.control.WorkerException} when
         *              the server closed
         */
        default void onLost(RemoteWorker worker, Throwable cause) {
        }

        /**
         * A worker's model API answered {@code count} of its requests with HTTP 429 (too many
         * requests) since this listener was last told of that worker, retried requests included
         * ({@code throttled} frames, PROTOCOL.md revision 4). Frames that arrive while a call for
         * the worker waits are added to it: one call waits per worker, however many frames come.
         */
        default void onThrottled(RemoteWorker worker, long count) {
        }

        /**
         * The server failed as a whole (a selector thread died) and is closing: every worker is
         * being dropped, and its pool is marked failed.
         *
         * @param cause what killed the selector thread
         */
        default void onFailed(Throwable cause) {
        }
    }

    private final ServerOptions options;
    private final SharedPool pool;
    private final String threadPrefix;
    private final ServerSocketChannel serverChannel;
    private final InetSocketAddress address;
    private final SelectorLoop[] loops;
    private final Thread[] loopThreads;
    private final ThreadPoolExecutor completions;
    /** Every completion thread started, so that close() can see them end, not only go idle. */
    private final List<Thread> completionThreads = new CopyOnWriteArrayList<>();
    /** The pool kept in step, and the one thread that tells the listener, in order. */
    private final ServerEvents serverEvents;
    /**
     * Where TLS handshakes run their delegated tasks, so that a slow certificate check or key
     * agreement never holds a selector thread: bounded, in turns by peer address; null without
     * TLS. Its threads end when idle.
     */
    private final HandshakeTasks tlsTasks;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** The connections not registered yet, shared with the acceptor and the actors. */
    private final UnregisteredConnections unregistered;
    /** Round-robin cursor over the loops; loop 0's thread only (it accepts). */
    private int nextLoop;

    /**
     * Binds, starts the selector threads and begins accepting workers.
     *
     * @param options  how to listen; see {@link ServerOptions}
     * @param pool     the pool to keep in step with the registered workers
     * @param listener told of registrations, rejections and losses, on the server's events thread
     * @return the running server; close it to stop
     * @throws IOException when the address cannot be bound (in use, not local) or a selector
     *                     cannot be opened; the message names the address
     */
    public static WorkerServer start(ServerOptions options, SharedPool pool, Listener listener) throws IOException {
        return new WorkerServer(options, pool, listener, () -> System.nanoTime() / 1_000_000);
    }

    /** A host name given as text (as command lines give it) is looked up once, here, at bind time. */
    private static InetSocketAddress resolved(InetSocketAddress address) throws IOException {
        if (!address.isUnresolved()) {
            return address;
        }
        InetSocketAddress resolved = new InetSocketAddress(address.getHostString(), address.getPort());
        if (resolved.isUnresolved()) {
            throw new IOException("cannot listen for workers on " + address.getHostString() + ":" + address.getPort()
                    + ": the host name does not resolve; use an address of this machine such as 127.0.0.1 or 0.0.0.0");
        }
        return resolved;
    }

    /** {@link #start(ServerOptions, SharedPool, Listener)} with a listener that does nothing. */
    public static WorkerServer start(ServerOptions options, SharedPool pool) throws IOException {
        return start(options, pool, new Listener() {
        });
    }

    private WorkerServer(ServerOptions options, SharedPool pool, Listener listener, LongSupplier clockMs)
            throws IOException {
        this.options = Objects.requireNonNull(options, "options");
        this.pool = Objects.requireNonNull(pool, "pool");
        this.threadPrefix = "panoptes-remote-" + SERVERS.incrementAndGet() + "-";
        this.tlsTasks = options.tls() ? new HandshakeTasks(TLS_THREADS, options.maxUnregisteredConnections(),
                threadPrefix + "tls-") : null;
        this.serverEvents = new ServerEvents(pool, Objects.requireNonNull(listener, "listener"), threadPrefix);
        ServerContext context = new ServerContext(options, serverEvents, tlsTasks);
        this.completions = new ThreadPoolExecutor(options.completionThreads(), options.completionThreads(),
                0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                daemonThreads(threadPrefix + "completion-", completionThreads));
        this.loops = new SelectorLoop[options.selectorThreads()];
        this.loopThreads = new Thread[loops.length];
        ServerSocketChannel channel = null;
        try {
            for (int i = 0; i < loops.length; i++) {
                loops[i] = new SelectorLoop(threadPrefix + "io-" + i, context, completions, clockMs, this::onLoopDied);
            }
            channel = ServerSocketChannel.open();
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            InetSocketAddress bind = resolved(options.bind());
            try {
                channel.bind(bind, ACCEPT_BACKLOG);
            } catch (IOException e) {
                throw new IOException("cannot listen for workers on " + options.bind() + ": " + e.getMessage()
                        + "; is another coordinator running there? choose another address or port", e);
            }
            channel.configureBlocking(false);
            ServerSocketChannel listening = channel;
            InetSocketAddress local = (InetSocketAddress) channel.getLocalAddress();
            ConnectionAcceptor acceptor = new ConnectionAcceptor(listening::accept, loops[0], context, local,
                    this::handOff);
            // Registered before loop 0 starts, so that registration never races its select().
            acceptor.attach(channel.register(loops[0].selector(), SelectionKey.OP_ACCEPT, acceptor));
        } catch (IOException | RuntimeException e) {
            completions.shutdownNow();
            serverEvents.shutdownNow();
            if (tlsTasks != null) {
                tlsTasks.shutdownNow();
            }
            AutoCloseable[] toClose = new AutoCloseable[loops.length + 1];
            toClose[0] = channel;
            for (int i = 0; i < loops.length; i++) {
                toClose[i + 1] = loops[i] == null ? null : loops[i].selector();
            }
            Closer.closeAfter(e, toClose);
            throw e;
        }
        this.serverChannel = channel;
        this.unregistered = context.unregistered;
        this.address = (InetSocketAddress) channel.getLocalAddress();
        for (int i = 0; i < loops.length; i++) {
            loopThreads[i] = new Thread(loops[i], loops[i].name());
            loopThreads[i].setDaemon(true);
            loopThreads[i].start();
        }
        log.info("worker=- job=- - listening for workers on {} ({} selector threads, token {}, {}, heartbeat every {} ms,"
                        + " timeout {} ms, handshake timeout {} ms)", address, loops.length,
                options.token() == null ? "not required" : "required",
                !options.tls() ? "plaintext" : options.requireClientCertificate() ? "mutual TLS" : "TLS",
                options.heartbeatInterval().toMillis(),
                options.heartbeatTimeout().toMillis(), options.handshakeTimeout().toMillis());
    }

    /** The address the server listens on; with port 0 in the options, the port actually bound. */
    public InetSocketAddress address() {
        return address;
    }

    /** The options the server runs with. */
    public ServerOptions options() {
        return options;
    }

    /** The pool the server keeps in step with its workers. */
    public SharedPool pool() {
        return pool;
    }

    /** The prefix of every thread this server starts; for diagnostics and tests. */
    String threadNamePrefix() {
        return threadPrefix;
    }

    /** Why the server failed as a whole (a selector thread died), or null while it has not. */
    public Throwable failure() {
        return failure.get();
    }

    /**
     * Connections accepted that have neither registered nor closed yet (a TLS handshake in
     * progress included), at most {@link ServerOptions#maxUnregisteredConnections()}. Any thread.
     */
    public int unregisteredConnections() {
        return unregistered.count();
    }

    /**
     * Connections closed at accept since the server started because a cap on unregistered
     * connections was reached ({@link ServerOptions#maxUnregisteredConnections()},
     * {@link ServerOptions#maxUnregisteredPerAddress()}); they are not reported to the
     * {@link Listener}, one by one, so that a flood costs no work per connection. Any thread.
     */
    public long refusedConnections() {
        return unregistered.refused();
    }

    /** The count of unregistered connections, per address too; for tests. */
    UnregisteredConnections unregistered() {
        return unregistered;
    }

    /** The selector loop at {@code index}, for tests that inject failures. */
    SelectorLoop loop(int index) {
        return loops[index];
    }

    /**
     * Stops accepting, closes every connection (their pending and queued jobs fail with a
     * retryable {@link dev.panoptes.control.WorkerException}), ends the server's threads and
     * frees the port. Waits up to 5 s for the selector threads, then up to 5 s each for running
     * future callbacks and listener calls, warning if one overruns. Idempotent; any thread,
     * including a listener or a future callback (the calling thread is then not waited for).
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        log.info("worker=- job=- - closing the worker server on {} ({} in the pool)", address,
                Plural.of(pool.size(), "worker"));
        // Stop accepting now; loop 0 releases the port once the channel leaves its selector.
        Exception problem = Closer.closeAll(serverChannel);
        if (problem != null) {
            log.warn("worker=- job=- - closing the listening socket {} failed", address, problem);
        }
        for (SelectorLoop loop : loops) {
            loop.stop();
        }
        boolean interrupted = false;
        for (Thread thread : loopThreads) {
            if (thread == Thread.currentThread()) {
                continue;
            }
            try {
                thread.join(SHUTDOWN_STEP_TIMEOUT_MS);
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            }
            if (thread.isAlive()) {
                log.warn("worker=- job=- - selector thread {} did not stop within {} ms; going on without it",
                        thread.getName(), SHUTDOWN_STEP_TIMEOUT_MS);
            }
        }
        if (tlsTasks != null) {
            // The connections are closed: a handshake task still running has no one to resume.
            tlsTasks.shutdownNow();
        }
        // Channels a loop closed before they became connections were never counted out by one.
        unregistered.releaseClosed();
        completions.shutdown();
        serverEvents.shutdown();
        // From a callback or a listener, that thread would wait for itself: skip its wait.
        if (!interrupted) {
            interrupted = !awaitEnd(completions, completionThreads, "future callbacks",
                    "callbacks on dispatch futures must not block");
        }
        if (!interrupted) {
            interrupted = !serverEvents.awaitEnd();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
            log.warn("worker=- job=- - interrupted while closing the worker server on {}; threads may linger briefly",
                    address);
        }
        log.info("worker=- job=- - worker server on {} closed", address);
    }

    /**
     * Waits for a shut-down executor's threads to end, warning if they overrun.
     *
     * @return false when interrupted (the flag is then for the caller to restore)
     */
    static boolean awaitEnd(ThreadPoolExecutor executor, List<Thread> threads, String what, String advice) {
        if (threads.contains(Thread.currentThread())) {
            return true;
        }
        try {
            if (executor.awaitTermination(SHUTDOWN_STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                // Terminated means idle and exiting; joining makes "threads ended" literal.
                for (Thread thread : threads) {
                    thread.join(SHUTDOWN_STEP_TIMEOUT_MS);
                }
            } else {
                log.warn("worker=- job=- - {} still running {} ms after close ({} waiting); {}", what,
                        SHUTDOWN_STEP_TIMEOUT_MS, executor.getQueue().size(), advice);
            }
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return "WorkerServer[" + address + ", " + Plural.of(pool.size(), "worker") + (closed.get() ? ", closed" : "")
                + "]";
    }

    /** Loop 0's thread: spreads accepted connections over the loops, round-robin. */
    private void handOff(SocketChannel channel) {
        SelectorLoop loop = loops[nextLoop];
        nextLoop = (nextLoop + 1) % loops.length;
        loop.adopt(channel);
    }

    /**
     * On a dying selector thread, after it closed its own connections: the server cannot serve
     * its share of workers any more, so it fails as a whole instead of half-working.
     */
    private void onLoopDied(Throwable cause) {
        if (!failure.compareAndSet(null, cause) || closed.get()) {
            return;
        }
        log.error("worker=- job=- - the worker server on {} failed: a selector thread died of {}; closing it, and"
                + " every run over its pool stops", address, cause.toString());
        pool.fail(new IllegalStateException("the worker server on " + address + " failed: a selector thread died of "
                + cause, cause));
        serverEvents.failed(cause);
        close();
    }

    static ThreadFactory daemonThreads(String prefix, List<Thread> started) {
        ThreadFactory threads = DaemonThreads.named(n -> prefix + n);
        return r -> {
            Thread t = threads.newThread(r);
            started.add(t);
            return t;
        };
    }
}
