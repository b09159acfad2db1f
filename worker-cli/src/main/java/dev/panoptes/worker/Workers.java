package dev.panoptes.worker;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.PooledJobRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * The worker in two calls: {@link #serveWorker} runs one session, {@link #runWorkerForever}
 * keeps reconnecting. Both block the calling thread, which becomes the session's I/O thread, and
 * take an {@link AsyncJobRunner} (no thread per job). Their {@code Blocking} twins take a
 * blocking {@link JobRunner}, which then runs on a pool of {@code capacity} threads
 * ({@link PooledJobRunner}) for as long as the call lasts.
 */
public final class Workers {
    private static final Logger log = LoggerFactory.getLogger(Workers.class);

    private Workers() {
    }

    /**
     * Connects to {@code coordinator} (within a 10 s connect timeout), registers, and serves jobs
     * with a blocking runner until the coordinator closes the connection, with PROTOCOL.md's
     * defaults otherwise and {@code heartbeat} as the heartbeat interval (timeout 3 x that).
     *
     * @see #serveBlockingWorker(InetSocketAddress, String, int, JobRunner, WorkerOptions)
     */
    public static void serveBlockingWorker(InetSocketAddress coordinator, String workerId, int capacity,
                                           JobRunner runner, Duration heartbeat) throws IOException {
        serveBlockingWorker(coordinator, workerId, capacity, runner, WorkerOptions.defaults().withHeartbeat(heartbeat));
    }

    /**
     * {@link #serveWorker(InetSocketAddress, String, int, AsyncJobRunner, WorkerOptions)} with a
     * blocking runner on a pool of {@code capacity} threads, closed when the session ends.
     */
    public static void serveBlockingWorker(InetSocketAddress coordinator, String workerId, int capacity,
                                           JobRunner runner, WorkerOptions options) throws IOException {
        WorkerIds.requireCapacity(workerId, capacity);
        try (PooledJobRunner pool = new PooledJobRunner(runner, capacity, "worker-job")) {
            serveWorker(coordinator, workerId, capacity, pool, options);
        }
    }

    /**
     * Connects to {@code coordinator} within the options' connect timeout and runs one
     * {@link WorkerSession} on the calling thread.
     *
     * @throws IOException                   when the connection cannot be made (the message names
     *                                       the address) or fails, including when the coordinator
     *                                       goes silent for the heartbeat timeout
     * @throws RegistrationRejectedException when the coordinator refuses the registration
     * @throws IllegalArgumentException      when the id or capacity is invalid
     */
    public static void serveWorker(InetSocketAddress coordinator, String workerId, int capacity,
                                   AsyncJobRunner runner, WorkerOptions options) throws IOException {
        SocketChannel channel = SocketChannel.open();
        WorkerSession session;
        try {
            connect(channel, coordinator, options.connectTimeout());
            session = new WorkerSession(channel, workerId, capacity, runner, options);
        } catch (IOException e) {
            closeQuietly(channel);
            // The JDK's "Connection refused" names no address; the caller needs it.
            throw new IOException("cannot connect to coordinator " + describe(coordinator) + ": "
                    + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
        try (session) {
            session.serve();
        }
    }

    /**
     * {@link #runWorkerForever(InetSocketAddress, String, int, AsyncJobRunner, WorkerOptions)} with
     * a blocking runner on a pool of {@code capacity} threads.
     */
    public static void runBlockingWorkerForever(InetSocketAddress coordinator, String workerId, int capacity,
                                                JobRunner runner, WorkerOptions options) throws InterruptedException {
        new WorkerLoop(coordinator, workerId, capacity, runner, options).runForever();
    }

    /**
     * Runs sessions forever, reconnecting with capped exponential backoff and jitter; see
     * {@link WorkerLoop}. To stop it from another thread, build the {@link WorkerLoop} yourself.
     *
     * @throws InterruptedException when the calling thread is interrupted between sessions
     */
    public static void runWorkerForever(InetSocketAddress coordinator, String workerId, int capacity,
                                        AsyncJobRunner runner, WorkerOptions options) throws InterruptedException {
        new WorkerLoop(coordinator, workerId, capacity, runner, options).runForever();
    }

    /**
     * Connects {@code channel} (in blocking mode) to {@code address}, resolving its host name now
     * (so that every attempt sees current DNS), with Nagle off (frames are small and latency
     * matters) and TCP keep-alive on.
     */
    static void connect(SocketChannel channel, InetSocketAddress address, Duration timeout) throws IOException {
        InetSocketAddress resolved = new InetSocketAddress(address.getHostString(), address.getPort());
        if (resolved.isUnresolved()) {
            throw new UnknownHostException("cannot resolve coordinator host '" + address.getHostString() + "'");
        }
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        // The socket adaptor is what gives a channel's connect a timeout.
        channel.socket().connect(resolved, (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis())));
        log.debug("connected to coordinator {} from {}", describe(resolved), channel.getLocalAddress());
    }

    /** {@code host:port} (IPv6 hosts in brackets), without the JDK's "name/ip" form. */
    static String describe(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            String host = inet.getHostString();
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }

    static void closeQuietly(Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException e) {
            log.debug("closing {} failed: {}", closeable, e.toString());
        }
    }
}
