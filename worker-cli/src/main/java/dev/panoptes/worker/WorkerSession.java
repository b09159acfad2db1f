package dev.panoptes.worker;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Plural;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One connection of a worker to its coordinator, from {@code register} to close, following
 * docs/PROTOCOL.md's "Rules the worker keeps", on one thread. It runs the loop and decides when
 * the connection ends; the work lives in its parts: the bytes in {@link SessionTransport} (plain
 * or TLS socket, selector, frame codec, outbound buffer), the handshake in {@link Registration},
 * the clocks in {@link Heartbeats}, and the jobs in {@link JobTraffic}.
 *
 * <p><b>Threads.</b> The thread that calls {@link #serve()} is the session's only I/O thread:
 * it owns the selector, the socket, TLS, the decoder and encoder, the outbound buffer and the
 * held jobs. Each pass it reads every whole frame of each read, starts each assigned job through
 * the {@link AsyncJobRunner} (never blocking on it), and writes every answer that is ready, and
 * any heartbeat, in one write per pass (per 32 answers when a pass answers more, so that the
 * coordinator is not kept waiting for the last of them). Jobs complete on the runner's own
 * threads, and a completion only queues its answer and wakes the I/O thread (once, however many
 * complete together); a job that completes while it is being started is answered in the same
 * pass, with no hand-off at all. There is no thread per job and none for heartbeats: capacity
 * 1,024 costs the same threads as capacity 1. {@link #drain(Duration)}, {@link #close()} and the
 * views may be called from any thread: they set a flag and wake the I/O thread. Fields under
 * "I/O thread only" are touched by that thread alone.
 *
 * <p><b>Failures and cancels.</b> Every {@code failed} frame says whose failure it is
 * ({@code scope}), from the runner's {@link dev.panoptes.control.ControlException#scope()}. A
 * {@code cancel} from the coordinator cancels the job's future (which asks the runner to stop)
 * and the job is answered at once with {@code failed}, so that its slot frees on both sides.
 * Answers of jobs still running when the connection ends are abandoned: never written, and their
 * futures cancelled.
 *
 * <p><b>TLS.</b> With {@link WorkerOptions#tls()}, a {@link dev.panoptes.remote.tls.TlsSession} sits between the socket and
 * the framing: ciphertext is read and unwrapped into the same decoder, and the outbound buffer is
 * written through it. The handshake's delegated tasks run inline on the I/O thread: it has only
 * this connection, and nothing to serve until the handshake is done. A handshake that fails ends
 * {@link #serve()} with a {@link TlsHandshakeException} naming the coordinator and the reason.
 *
 * <p><b>Liveness.</b> When nothing at all arrives from the coordinator for the heartbeat timeout,
 * {@code serve()} ends with a {@link SocketTimeoutException}.
 */
public final class WorkerSession implements Closeable {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);

    private final String workerId;
    private final String coordinator;
    private final SessionTransport transport;
    private final Registration registration;
    private final Heartbeats heartbeats;
    private final JobTraffic jobs;

    // ---- any thread
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean shutDown = new AtomicBoolean();
    private final CountDownLatch served = new CountDownLatch(1);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean closed;
    private volatile boolean drainRequested;

    // ---- I/O thread only
    private final Consumer<Message> onMessage = this::onMessage;
    private final BooleanSupplier workWaiting = this::workWaiting;
    private boolean drainSent;

    /**
     * Prepares a session over a connected channel; nothing is sent until {@link #serve()}.
     *
     * @param channel  a connected socket channel; the session makes it non-blocking and closes it
     * @param workerId a valid worker id (see {@link WorkerIds})
     * @param capacity how many jobs run at once, at least 1
     * @param runner   starts each assigned job; called on the session's I/O thread, must not block
     * @param options  the token and the heartbeat timings
     * @throws IllegalArgumentException when the id or the capacity is invalid
     * @throws IOException              when the selector cannot be opened
     */
    public WorkerSession(SocketChannel channel, String workerId, int capacity, AsyncJobRunner runner,
                         WorkerOptions options) throws IOException {
        Objects.requireNonNull(channel, "channel");
        this.workerId = WorkerIds.requireValid(workerId);
        WorkerIds.requireCapacity(workerId, capacity);
        Objects.requireNonNull(runner, "runner");
        Objects.requireNonNull(options, "options");
        this.coordinator = Workers.describe(channel.socket().getRemoteSocketAddress());
        // Encodes and decodes with this worker's frame limit (WorkerOptions#maxFrameBytes).
        MessageCodec codec = new MessageCodec(options.maxFrameBytes());
        this.transport = new SessionTransport(channel, options, codec, coordinator);
        this.heartbeats = new Heartbeats(workerId, coordinator, options, transport);
        this.registration = new Registration(workerId, capacity, options, coordinator, transport, heartbeats);
        this.jobs = new JobTraffic(workerId, coordinator, capacity, runner, transport);
    }

    /**
     * Registers and serves {@code assign} frames until the connection ends. Call once; the
     * calling thread becomes the session's I/O thread.
     *
     * @throws IOException                    when the connection fails, including when nothing
     *                                        arrives for the heartbeat timeout
     *                                        ({@link SocketTimeoutException})
     * @throws RegistrationRejectedException  when the coordinator answers {@code rejected}
     * @throws dev.panoptes.control.ProtocolException when the coordinator sends a malformed frame
     * @throws IllegalStateException          when called a second time
     */
    public void serve() throws IOException {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("session of worker " + workerId + " with " + coordinator
                    + " is already serving; a session serves once");
        }
        jobs.bind(Thread.currentThread());
        try {
            if (closed) {
                return;
            }
            long now = System.nanoTime();
            transport.open(now);
            registration.start(now);
            runLoop();
        } catch (IOException | RuntimeException e) {
            Throwable cause = failure.get();
            if (cause == null && closed) {
                log.debug("worker={} - stopped serving {}: the session was closed locally", workerId, coordinator);
                return;
            }
            failure.compareAndSet(null, transport.asTlsFailure(e));
            throw rethrowable(failure.get());
        } finally {
            shutdown();
            served.countDown();
        }
    }

    /**
     * Ends the session gracefully: sends {@code drain}, lets every job the session holds be
     * answered (until {@code grace} has passed), then half-closes the connection, gives the
     * coordinator a moment to close its side, and closes. Jobs still unanswered when the grace
     * period ends are abandoned; the coordinator fails them retryably. Any thread; a second call
     * sends no second {@code drain}. A session that has not sent {@code register} yet is only
     * closed, since {@code register} must be the first frame.
     *
     * @return true when every job the session held was answered before it closed
     * @throws InterruptedException when the calling thread is interrupted while waiting; the
     *                              session is closed all the same
     */
    public boolean drain(Duration grace) throws InterruptedException {
        try {
            if (!started.get() || !registration.sent()) {
                return true;
            }
            drainRequested = true;
            transport.wakeup();
            if (!served.await(grace.toMillis() + heartbeats.lingerMs(), TimeUnit.MILLISECONDS)) {
                log.debug("worker={} - drain not finished within its grace of {}ms; closing", workerId,
                        grace.toMillis());
            }
        } finally {
            close();
        }
        // The I/O thread counts what it abandons as it ends, a moment after close().
        served.await(Heartbeats.MAX_LINGER_MS, TimeUnit.MILLISECONDS);
        return jobs.abandonedCount() == 0 && failure.get() == null;
    }

    /**
     * Closes the connection at once; jobs still held are abandoned (their futures cancelled) and
     * their late answers are never written. Idempotent; any thread. A {@link #serve()} in
     * progress then returns normally, unless the connection had already failed.
     */
    @Override
    public void close() {
        closed = true;
        if (!started.get() || served.getCount() == 0) {
            shutdown();
        } else {
            transport.wakeup();
        }
    }

    /** The id this session registers with. */
    public String workerId() {
        return workerId;
    }

    /** The coordinator's address, as text for messages. */
    public String coordinator() {
        return coordinator;
    }

    /**
     * True once the coordinator sent anything other than {@code rejected}: a {@code registered},
     * a heartbeat or an assignment. The reconnect loop resets its backoff after such a session.
     */
    public boolean accepted() {
        return registration.accepted();
    }

    /** How many answers ({@code result} or {@code failed}) this session has written. */
    public long answeredCount() {
        return jobs.answeredCount();
    }

    /** How many jobs are assigned and not yet answered. Any thread; a moment's view. */
    public int heldCount() {
        return jobs.heldCount();
    }

    // ---- the I/O thread ----

    private void runLoop() throws IOException {
        while (!closed) {
            long now = System.nanoTime();
            if (transport.endOfStream()) {
                // The caller says why the session ended; shutdown() names any jobs this abandons.
                log.debug("worker={} - coordinator {} closed the connection{} ({} held)", workerId, coordinator,
                        drainSent ? " after our drain" : "", Plural.of(jobs.heldIds(), "job"));
                return;
            }
            jobs.collectAnswers();
            if (!transport.outputShut()) {
                Message.Throttled throttled = jobs.newThrottles();
                if (throttled != null) {
                    send(throttled, now);
                }
            }
            if (drainRequested && !drainSent) {
                drainSent = true;
                log.info("worker={} - draining: asked coordinator {} to assign nothing more; finishing the jobs it"
                        + " holds ({})", workerId, coordinator, jobs.heldIds());
                send(new Message.Drain(), now);
            }
            heartbeats.check(now);
            transport.flush();
            if (drainSent && !transport.outputShut() && jobs.idle() && transport.allWritten()) {
                // Every answer is out: a FIN behind them.
                transport.shutdownOutput();
                heartbeats.startLinger(now);
            }
            if (transport.outputShut() && heartbeats.lingerOver(now)) {
                log.debug("worker={} - coordinator {} did not close within {}ms of our drain; closing", workerId,
                        coordinator, heartbeats.lingerMs());
                return;
            }
            transport.select(heartbeats.selectTimeoutMs(now), workWaiting);
            transport.handleReadiness(onMessage);
        }
    }

    /** Work that must not wait for the select's timeout: answers, a close, a drain to send. */
    private boolean workWaiting() {
        return jobs.answersWaiting() || closed || (drainRequested && !drainSent);
    }

    private void onMessage(Message message) {
        registration.onFrame(message);
        if (message instanceof Message.Assign assign) {
            jobs.onAssign(assign, transport.lastReceivedNanos());
        } else if (message instanceof Message.Cancel cancel) {
            jobs.onCancel(cancel);
        } else if (message instanceof Message.Heartbeat) {
            log.trace("worker={} - heartbeat from coordinator {}", workerId, coordinator);
        } else if (message instanceof Message.Registered registered) {
            registration.onRegistered(registered);
        } else {
            // PROTOCOL.md, slips: frames only a worker sends are ignored, not fatal.
            log.debug("worker={} - ignoring a '{}' frame from coordinator {}: only workers send it",
                    workerId, message.type(), coordinator);
        }
    }

    private void send(Message message, long now) throws IOException {
        transport.send(message);
        heartbeats.sent(now);
    }

    // ---- any thread ----

    /** Ends everything this session owns; once, on the I/O thread or when it never served. */
    private void shutdown() {
        if (!shutDown.compareAndSet(false, true)) {
            return;
        }
        closed = true;
        List<JobId> dropped = jobs.abandonAll();
        transport.close();
        if (!dropped.isEmpty()) {
            log.warn("worker={} - {} with {} unanswered {}; abandoning them (the coordinator fails them"
                    + " retryably and redelivers them)", workerId, drainRequested
                            ? "draining ended (grace period over or connection lost)"
                            : "connection to coordinator " + coordinator + " closed", Plural.of(dropped.size(), "job"),
                    dropped);
        }
    }

    private static IOException rethrowable(Throwable cause) {
        if (cause instanceof IOException io) {
            return io;
        }
        if (cause instanceof RuntimeException re) {
            throw re;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new IOException(cause);
    }
}
