package dev.panoptes.worker;

import dev.panoptes.control.Plural;
import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.PeerSpeaksTlsException;
import dev.panoptes.control.wire.FrameEncoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.control.wire.OutboundBuffer;
import dev.panoptes.remote.tls.TlsSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One connection of a worker to its coordinator, from {@code register} to close, following
 * docs/PROTOCOL.md's "Rules the worker keeps", on one thread.
 *
 * <p><b>Threads.</b> The thread that calls {@link #serve()} is the session's only I/O thread:
 * it owns the non-blocking socket and a selector, reads every whole frame of each read, starts
 * each assigned job through the {@link AsyncJobRunner} (never blocking on it), and writes every
 * answer that is ready, and any heartbeat, in one write per pass (per 32 answers when a pass
 * answers more, so that the coordinator is not kept waiting for the last of them). Jobs complete on the runner's
 * own threads, and a completion only queues its answer and wakes the I/O thread (once, however
 * many complete together); a job that completes while it is being started is answered in the
 * same pass, with no hand-off at all. There is no thread per job and none for heartbeats:
 * capacity 1,024 costs the same threads as capacity 1. {@link #drain(Duration)},
 * {@link #close()} and the views may be called from any thread: they set a flag and wake the
 * I/O thread. Fields under "I/O thread only" are touched by that thread alone.
 *
 * <p><b>Failures and cancels.</b> Every {@code failed} frame says whose failure it is
 * ({@code scope}), from the runner's {@link dev.panoptes.control.ControlException#scope()}. A
 * {@code cancel} from the coordinator cancels the job's future (which asks the runner to stop)
 * and the job is answered at once with {@code failed}, so that its slot frees on both sides.
 * Answers of jobs still running when the connection ends are abandoned: never written, and their
 * futures cancelled.
 *
 * <p><b>TLS.</b> With {@link WorkerOptions#tls()}, a {@link TlsSession} sits between the socket and
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
    /** The longest a drained session waits for the coordinator to close its side. */
    private static final long MAX_LINGER_MS = 2000;
    private static final int READ_BUFFER_BYTES = 64 * 1024;
    /** Reads per readiness event before the answers are written: bounds a pass's latency. */
    private static final int MAX_READS_PER_PASS = 16;
    /**
     * Answers are written every this many, not only at the end of a pass: a read that brings a
     * whole window of jobs would otherwise leave the coordinator idle until the last one is
     * answered, then this thread idle while it sends the next window. Written in slices, the two
     * sides work at once (dispatch-session, K=256: 357k jobs/s in one write per pass, 672-877k in
     * slices of 32-64; K=64: 328k, 480-520k in slices of 32). One write per 32 answers costs
     * well under 0.1 us per answer; K=1 is unaffected.
     */
    private static final int ANSWERS_PER_WRITE = 32;

    private final SocketChannel channel;
    private final Selector selector;
    private final String workerId;
    private final int capacity;
    private final AsyncJobRunner runner;
    /** I/O thread only: the runner's 429 count already reported to the coordinator. */
    private long throttlesReported;
    private final WorkerOptions options;
    private final String coordinator;
    /** Encodes and decodes with this worker's frame limit ({@link WorkerOptions#maxFrameBytes}). */
    private final MessageCodec codec;

    // ---- any thread
    /** Answers of finished jobs, queued by whichever thread finished them, for the I/O thread. */
    private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
    /** True while the I/O thread is awake or a wakeup is on its way: no need to wake it (again). */
    private final AtomicBoolean wakeupPending = new AtomicBoolean(true);
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean shutDown = new AtomicBoolean();
    private final CountDownLatch served = new CountDownLatch(1);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicInteger abandoned = new AtomicInteger();
    private volatile Thread ioThread;
    private volatile boolean closed;
    private volatile boolean drainRequested;
    private volatile boolean registerSent;
    private volatile boolean accepted;
    private volatile int heldCount;

    // ---- I/O thread only
    private final FrameDecoder decoder;
    private final FrameEncoder encoder;
    /**
     * The largest frame this worker sends: its own limit, or the coordinator's when it said a
     * smaller one at registration.
     */
    private long sendLimit;
    private final OutboundBuffer out = new OutboundBuffer();
    /** The TLS layer under the framing; null for plaintext. */
    private final TlsSession tls;
    private final ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
    private final Map<JobId, Held> held = new HashMap<>();
    /** Jobs held under an id that another held job has too (a coordinator repeating itself). */
    private int stacked;
    /** Answers of jobs that finished on this thread, while being started: no queue, no wake-up. */
    private final List<Answer> inlineAnswers = new ArrayList<>();
    private final Consumer<Message> onMessage = this::onMessage;
    private SelectionKey key;
    private long heartbeatIntervalMs;
    private long readTimeoutMs;
    private long lastReceivedNanos;
    /** The time of the last read, for stamping the jobs it brought. */
    private long passNanos;
    private long lastSentNanos;
    private boolean writeInterest;
    /** Answers encoded since the last write. */
    private int unwritten;
    /** A write that failed in the middle of a pass, thrown by the next {@link #flush()}. */
    private IOException writeFailure;
    private boolean drainSent;
    private boolean outputShut;
    private long lingerUntilNanos;
    private boolean endOfStream;

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
        this.channel = Objects.requireNonNull(channel, "channel");
        this.workerId = WorkerIds.requireValid(workerId);
        this.capacity = WorkerIds.requireCapacity(workerId, capacity);
        this.runner = Objects.requireNonNull(runner, "runner");
        // 429s seen before this connection were the previous session's to report (or lost with it).
        this.throttlesReported = runner.throttledCount();
        this.options = Objects.requireNonNull(options, "options");
        this.codec = new MessageCodec(options.maxFrameBytes());
        this.decoder = new FrameDecoder(codec);
        this.encoder = new FrameEncoder(codec);
        this.sendLimit = options.maxFrameBytes();
        this.coordinator = Workers.describe(channel.socket().getRemoteSocketAddress());
        if (options.tls() != null) {
            // The host name the worker was given (not the address it resolved to) is what the
            // coordinator's certificate must name.
            InetSocketAddress peer = (InetSocketAddress) channel.getRemoteAddress();
            this.tls = TlsSession.client(options.tls(), peer.getHostString(), peer.getPort(), channel, null, null);
        } else {
            this.tls = null;
        }
        this.selector = Selector.open();
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
        ioThread = Thread.currentThread();
        try {
            if (closed) {
                return;
            }
            channel.configureBlocking(false);
            key = channel.register(selector, SelectionKey.OP_READ);
            heartbeatIntervalMs = Math.max(1, options.heartbeatInterval().toMillis());
            readTimeoutMs = Math.max(1, options.heartbeatTimeout().toMillis());
            long now = System.nanoTime();
            lastReceivedNanos = now;
            send(new Message.Register(workerId, capacity, Message.PROTOCOL_VERSION, options.token(),
                    options.labels(), options.models()), now);
            registerSent = true;
            log.info("worker={} - connected to coordinator {}; registering with capacity {}",
                    workerId, coordinator, capacity);
            runLoop();
        } catch (IOException | RuntimeException e) {
            Throwable cause = failure.get();
            if (cause == null && closed) {
                log.debug("worker={} - stopped serving {}: the session was closed locally", workerId, coordinator);
                return;
            }
            failure.compareAndSet(null, asTlsFailure(e));
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
            if (!started.get() || !registerSent) {
                return true;
            }
            drainRequested = true;
            wakeup();
            if (!served.await(grace.toMillis() + lingerMs(), TimeUnit.MILLISECONDS)) {
                log.debug("worker={} - drain not finished within its grace of {}ms; closing", workerId,
                        grace.toMillis());
            }
        } finally {
            close();
        }
        // The I/O thread counts what it abandons as it ends, a moment after close().
        served.await(MAX_LINGER_MS, TimeUnit.MILLISECONDS);
        return abandoned.get() == 0 && failure.get() == null;
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
            wakeup();
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
        return accepted;
    }

    /** How many answers ({@code result} or {@code failed}) this session has written. */
    public long answeredCount() {
        return answered.get();
    }

    /** How many jobs are assigned and not yet answered. Any thread; a moment's view. */
    public int heldCount() {
        return heldCount;
    }

    // ---- the I/O thread ----

    private void runLoop() throws IOException {
        while (!closed) {
            long now = System.nanoTime();
            if (endOfStream) {
                // The caller says why the session ended; shutdown() names any jobs this abandons.
                log.debug("worker={} - coordinator {} closed the connection{} ({} held)", workerId, coordinator,
                        drainSent ? " after our drain" : "", Plural.of(held.size(), "job"));
                return;
            }
            collectAnswers();
            reportThrottles(now);
            if (drainRequested && !drainSent) {
                drainSent = true;
                log.info("worker={} - draining: asked coordinator {} to assign nothing more; finishing the jobs it"
                        + " holds ({})", workerId, coordinator, held.size());
                send(new Message.Drain(), now);
            }
            checkClocks(now);
            flush();
            if (drainSent && !outputShut && held.isEmpty() && out.isEmpty()
                    && (tls == null || !tls.hasPendingOutput())) {
                // Every answer is out: a FIN behind them, so that the coordinator reads them all
                // before our end of stream (a close with unread input could reset and lose them).
                if (tls != null) {
                    tls.closeOutbound();
                }
                channel.shutdownOutput();
                outputShut = true;
                lingerUntilNanos = now + TimeUnit.MILLISECONDS.toNanos(lingerMs());
            }
            if (outputShut && now - lingerUntilNanos >= 0) {
                log.debug("worker={} - coordinator {} did not close within {}ms of our drain; closing", workerId,
                        coordinator, lingerMs());
                return;
            }
            select(now);
            handleReadiness();
        }
    }

    private void select(long now) throws IOException {
        wakeupPending.set(false);
        // Re-check after clearing the flag: whatever was queued before it was missed by its
        // producer's wakeup, so go round again instead of sleeping on it.
        if (!answers.isEmpty() || !inlineAnswers.isEmpty() || closed || (drainRequested && !drainSent)) {
            wakeupPending.set(true);
            selector.selectNow();
            return;
        }
        long timeoutMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextDeadlineNanos(now) - now));
        selector.select(timeoutMs);
        wakeupPending.set(true);
    }

    private void handleReadiness() throws IOException {
        if (selector.selectedKeys().isEmpty()) {
            return;
        }
        selector.selectedKeys().clear();
        if (key.isValid() && key.isReadable()) {
            read();
        }
        if (key.isValid() && key.isWritable()) {
            flush();
        }
    }

    /** A TLS failure before the handshake completed, said as one: which coordinator, why, what to check. */
    private Exception asTlsFailure(Exception e) {
        if (tls != null && e instanceof SSLException ssl && !tls.isHandshakeComplete()) {
            if (tls.peerSentPlaintext()) {
                return TlsHandshakeException.plaintextCoordinator(coordinator, ssl);
            }
            return new TlsHandshakeException(coordinator, TlsSession.reason(ssl), ssl);
        }
        return e;
    }

    /** {@link #read()} through TLS: ciphertext in, every whole frame of its plaintext acted on. */
    private void readTls() throws IOException {
        for (int reads = 0; reads < MAX_READS_PER_PASS; reads++) {
            int n = tls.readNet();
            if (n < 0) {
                endOfStream = true;
                if (!tls.isHandshakeComplete()) {
                    throw new SSLHandshakeException("the coordinator closed the connection during the handshake"
                            + " (does it require a client certificate, --tls-cert and --tls-key? does it speak TLS?)");
                }
                if (decoder.isMidFrame()) {
                    throw new ProtocolException("coordinator " + coordinator + " closed the connection in the middle"
                            + " of a frame");
                }
                return;
            }
            if (n > 0) {
                lastReceivedNanos = System.nanoTime();
                passNanos = lastReceivedNanos;
            }
            boolean full = tls.netInFull();
            ByteBuffer plain;
            while ((plain = tls.unwrap()) != null) {
                decoder.feed(plain, onMessage);
            }
            if (tls.isInboundDone()) {
                // close_notify: the coordinator ended the stream on purpose.
                endOfStream = true;
                return;
            }
            if (n == 0 || !full) {
                return;
            }
        }
    }

    /** Reads what the socket has and acts on every whole frame. */
    private void read() throws IOException {
        if (tls != null) {
            readTls();
            return;
        }
        for (int reads = 0; reads < MAX_READS_PER_PASS; reads++) {
            readBuffer.clear();
            int n = channel.read(readBuffer);
            if (n < 0) {
                endOfStream = true;
                if (decoder.isMidFrame()) {
                    throw new ProtocolException("coordinator " + coordinator + " closed the connection in the middle"
                            + " of a frame");
                }
                return;
            }
            if (n == 0) {
                return;
            }
            lastReceivedNanos = System.nanoTime();
            // The jobs a read brings are stamped with its time: one clock read per read, not per job.
            passNanos = lastReceivedNanos;
            readBuffer.flip();
            try {
                decoder.feed(readBuffer, onMessage);
            } catch (PeerSpeaksTlsException e) {
                throw new CoordinatorSpeaksTlsException(coordinator, e);
            }
            if (n < readBuffer.capacity()) {
                return;
            }
        }
    }

    private void onMessage(Message message) {
        if (message instanceof Message.Rejected rejected) {
            throw new RegistrationRejectedException(coordinator, workerId, rejected.reason(), rejected.retryable());
        }
        accepted = true;
        if (message instanceof Message.Assign assign) {
            onAssign(assign);
        } else if (message instanceof Message.Cancel cancel) {
            onCancel(cancel);
        } else if (message instanceof Message.Heartbeat) {
            log.trace("worker={} - heartbeat from coordinator {}", workerId, coordinator);
        } else if (message instanceof Message.Registered registered) {
            onRegistered(registered.heartbeatMs());
            if (registered.maxFrameBytes() != null && registered.maxFrameBytes() > 0
                    && registered.maxFrameBytes() < sendLimit) {
                sendLimit = registered.maxFrameBytes();
                log.info("worker={} - coordinator {} accepts frames of up to {} bytes; this worker's limit is {}"
                        + " (--max-frame-bytes): answers bigger than {} bytes fail their job", workerId, coordinator,
                        sendLimit, codec.maxFrameBytes(), sendLimit);
            }
        } else {
            // PROTOCOL.md, slips: frames only a worker sends are ignored, not fatal.
            log.debug("worker={} - ignoring a '{}' frame from coordinator {}: only workers send it",
                    workerId, message.type(), coordinator);
        }
    }

    private void onRegistered(long coordinatorHeartbeatMs) {
        log.info("worker={} - registered with coordinator {} (its heartbeat interval: {}ms)",
                workerId, coordinator, coordinatorHeartbeatMs);
        if (coordinatorHeartbeatMs <= 0) {
            return;
        }
        // Keep liveness working with a coordinator tuned differently from us: beat at least as
        // often as it does, and wait at least three of its intervals before declaring it dead.
        if (coordinatorHeartbeatMs < heartbeatIntervalMs) {
            log.debug("worker={} - heartbeating every {}ms to match coordinator {}", workerId,
                    coordinatorHeartbeatMs, coordinator);
            heartbeatIntervalMs = coordinatorHeartbeatMs;
        }
        long coordinatorTimeoutMs = coordinatorHeartbeatMs * WorkerOptions.HEARTBEAT_TIMEOUT_FACTOR;
        if (coordinatorTimeoutMs > readTimeoutMs) {
            readTimeoutMs = coordinatorTimeoutMs;
            log.debug("worker={} - waiting up to {}ms for frames from coordinator {}", workerId, readTimeoutMs,
                    coordinator);
        }
    }

    private void onAssign(Message.Assign assign) {
        JobId id = assign.job().id();
        Held job = new Held(id, passNanos);
        Held earlier = held.put(id, job);
        if (earlier != null) {
            // A coordinator repeated an id it has outstanding: run both, answer both; it ignores one.
            job.earlier = earlier;
            stacked++;
        }
        heldCount = held.size() + stacked;
        if (held.size() > capacity) {
            log.warn("worker={} job={} - coordinator {} now has {} outstanding on this connection, more than"
                    + " the capacity of {}; running it anyway", workerId, id, coordinator,
                    Plural.of(held.size(), "job"), capacity);
        } else if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - assigned ({} of {} slots busy)", workerId, id, held.size(), capacity);
        }
        try {
            job.future = runner.start(assign.job()).toCompletableFuture();
        } catch (RuntimeException | Error e) {
            // One bad job never ends the session: a runner that throws is answered like a job
            // that failed in a way that may pass elsewhere.
            log.error("worker={} job={} - the job runner failed to start it", workerId, id, e);
            inlineAnswers.add(new Answer(job, null, e));
            return;
        }
        // Completes on the runner's thread, or right here (then it costs no hand-off at all).
        job.future.whenComplete((outcome, error) -> onJobDone(job, outcome, error));
        if (inlineAnswers.size() >= ANSWERS_PER_WRITE) {
            collectAnswers();
        }
    }

    /**
     * The coordinator gave up on a job (its deadline passed): cancel it, so that the runner stops
     * and its slot frees. Its answer comes from the cancelled future, at once.
     */
    private void onCancel(Message.Cancel cancel) {
        Held job = held.get(cancel.jobId());
        if (job == null || job.future == null) {
            log.debug("worker={} job={} - cancel for a job not running here (answered already)", workerId,
                    cancel.jobId());
            return;
        }
        log.info("worker={} job={} - cancelled by coordinator {}: {}; stopping it", workerId, cancel.jobId(),
                coordinator, cancel.reason() == null ? "no reason given" : cancel.reason());
        job.cancelledByCoordinator = true;
        job.future.cancel(true);
    }

    /**
     * Moves every finished job's answer into the outbound buffer, writing every
     * {@link #ANSWERS_PER_WRITE} of them at once rather than all at the end of the pass.
     */
    private void collectAnswers() {
        for (int i = 0; i < inlineAnswers.size(); i++) {
            writeAnswer(inlineAnswers.get(i));
        }
        inlineAnswers.clear();
        Answer a;
        while ((a = answers.poll()) != null) {
            writeAnswer(a);
        }
    }

    private void writeAnswer(Answer a) {
        Held job = a.job();
        if (!release(job)) {
            return; // abandoned when the session closed
        }
        Message message = answerFor(job, a.outcome(), a.error());
        encoder.encode(message);
        if (encoder.bodyLength() > sendLimit) {
            message = Message.Failed.of(job.id, "the answer of worker " + workerId + " to job " + job.id
                    + " cannot be sent: its frame of " + encoder.bodyLength() + " bytes exceeds the frame limit of "
                    + sendLimit + " bytes; raise --max-frame-bytes on both sides (the coordinator and its"
                    + " workers), or lower --max-tokens or --job-size", FailureScope.JOB);
            encoder.encode(message);
        }
        encoder.appendTo(out);
        answered.incrementAndGet();
        logAnswer(job, message);
        if (++unwritten >= ANSWERS_PER_WRITE) {
            flushEarly();
        }
    }

    private Message answerFor(Held job, JobOutcome outcome, Throwable error) {
        if (error == null) {
            if (outcome == null) {
                return Message.Failed.of(job.id, "the job runner of worker " + workerId + " returned no outcome for"
                        + " job " + job.id, FailureScope.TRANSIENT);
            }
            if (!outcome.jobId().equals(job.id)) {
                return Message.Failed.of(job.id, "worker " + workerId + " produced a wrong outcome: it answers job "
                        + outcome.jobId(), FailureScope.TRANSIENT);
            }
            return new Message.Result(outcome);
        }
        Throwable cause = unwrap(error);
        if (job.cancelledByCoordinator) {
            return Message.Failed.of(job.id, "job " + job.id + " was stopped on worker " + workerId
                    + ": the coordinator cancelled it", FailureScope.TRANSIENT);
        }
        if (cause instanceof ControlException ce) {
            return Message.Failed.of(job.id, messageOf(ce), ce.scope());
        }
        log.error("worker={} job={} - the job runner failed unexpectedly", workerId, job.id, cause);
        return Message.Failed.of(job.id, "worker " + workerId + " failed on job " + job.id + ": "
                + messageOf(cause), FailureScope.TRANSIENT);
    }

    private void logAnswer(Held job, Message message) {
        if (message instanceof Message.Failed failed) {
            log.warn("worker={} job={} - failed after {}ms ({}): {}", workerId, job.id, elapsedMs(job),
                    describeScope(failed.effectiveScope()), failed.error());
        } else if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - done in {}ms", workerId, job.id, elapsedMs(job));
        }
    }

    private static long elapsedMs(Held job) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - job.startNanos);
    }

    private static String describeScope(FailureScope scope) {
        switch (scope) {
            case JOB:
                return "the job's own failure, not retryable";
            case WORKER:
                return "this worker's own failure: check its model API settings";
            default:
                return "retryable";
        }
    }

    /** Forgets a finished job. @return false when it was not held any more (abandoned) */
    private boolean release(Held job) {
        Held current = held.get(job.id);
        boolean found;
        if (current == job) {
            if (job.earlier != null) {
                held.put(job.id, job.earlier);
                stacked--;
            } else {
                held.remove(job.id);
            }
            found = true;
        } else if (current != null && current.removeEarlier(job)) {
            stacked--;
            found = true;
        } else {
            found = false;
        }
        heldCount = held.size() + stacked;
        return found;
    }

    /**
     * Tells the coordinator how many 429s the model API answered since the last report, so that
     * it can govern the fleet's concurrency against the API (PROTOCOL.md, revision 4).
     */
    private void reportThrottles(long now) throws IOException {
        long seen = runner.throttledCount();
        if (seen > throttlesReported && !outputShut) {
            send(new Message.Throttled(seen - throttlesReported), now);
            throttlesReported = seen;
        }
    }

    private void checkClocks(long now) throws IOException {
        long silentMs = TimeUnit.NANOSECONDS.toMillis(now - lastReceivedNanos);
        if (silentMs >= readTimeoutMs && !endOfStream) {
            throw new SocketTimeoutException("nothing received from coordinator " + coordinator + " for " + readTimeoutMs
                    + "ms (the heartbeat timeout); treating the connection as dead");
        }
        if (!outputShut && TimeUnit.NANOSECONDS.toMillis(now - lastSentNanos) >= heartbeatIntervalMs) {
            // Bytes still waiting to go out say we live once they arrive; no heartbeat behind them.
            if (out.isEmpty()) {
                send(new Message.Heartbeat(workerId), now);
            }
            lastSentNanos = now;
        }
    }

    private long nextDeadlineNanos(long now) {
        long next = lastReceivedNanos + TimeUnit.MILLISECONDS.toNanos(readTimeoutMs);
        if (!outputShut) {
            next = Math.min(next, lastSentNanos + TimeUnit.MILLISECONDS.toNanos(heartbeatIntervalMs));
        } else {
            next = Math.min(next, lingerUntilNanos);
        }
        return Math.max(next, now);
    }

    private void send(Message message, long now) throws IOException {
        if (outputShut) {
            return;
        }
        encoder.encode(message).appendTo(out);
        lastSentNanos = now;
        flush();
    }

    /**
     * Writes answers in the middle of a pass. A failure is kept for the pass's own
     * {@link #flush()}, which ends the session; decoding goes on meanwhile, harmlessly.
     */
    private void flushEarly() {
        try {
            flush();
        } catch (IOException e) {
            writeFailure = e;
        }
    }

    /** Writes what is buffered without blocking; the rest waits for the socket to take more. */
    private void flush() throws IOException {
        if (writeFailure != null) {
            throw writeFailure;
        }
        unwritten = 0;
        if (outputShut) {
            return;
        }
        boolean wantWrite;
        if (tls == null) {
            if (out.isEmpty()) {
                return;
            }
            out.writeTo(channel);
            wantWrite = !out.isEmpty();
        } else {
            if (out.isEmpty() && !tls.hasPendingOutput()) {
                return;
            }
            // Plaintext leaves only as fast as its ciphertext does; before the handshake is done
            // (register waits for it), only handshake messages do.
            out.writeTo(tls);
            tls.flush();
            wantWrite = tls.hasPendingOutput() || (!out.isEmpty() && tls.canSendData());
        }
        if (wantWrite != writeInterest) {
            writeInterest = wantWrite;
            key.interestOps(wantWrite ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }
    }

    private long lingerMs() {
        return Math.max(100, Math.min(MAX_LINGER_MS, options.heartbeatInterval().toMillis()));
    }

    // ---- any thread ----

    /** A job finished, on whatever thread finished it: queue its answer for the I/O thread. */
    private void onJobDone(Held job, JobOutcome outcome, Throwable error) {
        if (Thread.currentThread() == ioThread) {
            inlineAnswers.add(new Answer(job, outcome, error));
            return;
        }
        answers.add(new Answer(job, outcome, error));
        wakeup();
    }

    private void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    /** Ends everything this session owns; once, on the I/O thread or when it never served. */
    private void shutdown() {
        if (!shutDown.compareAndSet(false, true)) {
            return;
        }
        closed = true;
        List<JobId> dropped = new ArrayList<>();
        for (Held h : held.values()) {
            for (Held j = h; j != null; j = j.earlier) {
                dropped.add(j.id);
                if (j.future != null) {
                    // Stop the work: nobody will read its answer.
                    j.future.cancel(true);
                }
            }
        }
        held.clear();
        stacked = 0;
        heldCount = 0;
        answers.clear();
        inlineAnswers.clear();
        Workers.closeQuietly(channel);
        Workers.closeQuietly(selector);
        if (!dropped.isEmpty()) {
            abandoned.addAndGet(dropped.size());
            log.warn("worker={} - {} with {} unanswered {}; abandoning them (the coordinator fails them"
                    + " retryably and redelivers them)", workerId, drainRequested
                            ? "draining ended (grace period over or connection lost)"
                            : "connection to coordinator " + coordinator + " closed", Plural.of(dropped.size(), "job"),
                    dropped);
        }
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String messageOf(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
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

    /** A job assigned and not yet answered. I/O thread only, but for what the runner completes. */
    private static final class Held {
        final JobId id;
        final long startNanos;
        /** The job's future from the runner; null until started. */
        CompletableFuture<JobOutcome> future;
        boolean cancelledByCoordinator;
        /** The same id assigned earlier and still running (a coordinator repeating itself). */
        Held earlier;

        Held(JobId id, long startNanos) {
            this.id = id;
            this.startNanos = startNanos;
        }

        boolean removeEarlier(Held job) {
            for (Held h = this; h.earlier != null; h = h.earlier) {
                if (h.earlier == job) {
                    h.earlier = job.earlier;
                    return true;
                }
            }
            return false;
        }
    }

    /** A finished job, waiting to be answered. */
    private record Answer(Held job, JobOutcome outcome, Throwable error) {
    }
}
