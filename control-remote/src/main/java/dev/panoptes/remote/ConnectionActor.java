package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.remote.tls.TlsSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.EOFException;
import java.net.SocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One worker connection from accept to close: its phase (handshake, open, closed), its clocks
 * ({@link Liveness}) and its end. It routes what happens to the three parts that do the work: the
 * bytes on the socket, plain or TLS ({@link ConnectionTransport}), the {@code register} handshake
 * ({@link RegistrationHandshake}) and the job traffic ({@link JobAssignments}, over the job table
 * {@link PendingJobs}).
 *
 * <p><b>Threads.</b> Exactly one thread, the selector thread of {@link #loop}, reads and writes
 * the socket and touches the phase and the three parts' selector-owned state; the owner methods
 * assert it. Other threads reach the actor only through {@link #enqueue} (which encodes the job on
 * the caller's thread, puts a {@link Dispatch} on the bounded {@code BlockingQueue} and signals
 * the loop), a cancelled {@link DispatchFuture} (which posts a task to the loop) and the volatile
 * read-only views. Nothing here blocks except {@code enqueue}, on the caller's thread, while the
 * queue is full.
 *
 * <p><b>Flow.</b> The loop calls the owner methods named for events: {@link #onReadable()},
 * {@link #onWritable()}, {@link #onDispatchQueued()}, {@link #onTimer(long)}, {@link #flush()}
 * and {@link #close(Throwable)}. Queued dispatches are drained only while a slot is free, so at
 * most {@code capacity} assigns are ever unanswered, which also bounds the outgoing buffer.
 *
 * <p><b>Futures.</b> The selector thread decides each future: it claims the dispatch as it reads
 * the answer (see {@link DispatchFuture}) and hands the completion to {@link SelectorLoop#complete}
 * / {@link SelectorLoop#fail}. By default these give the pass's completions to the server's
 * completion executor, so callbacks never run on the selector thread. With
 * {@link ServerOptions#directCompletions()} (the coordinator command runs so) they complete the
 * futures on this selector thread at the end of the pass, callbacks included: the caller promised
 * callbacks that never block. A dispatch that finds the connection already gone, or a job that
 * cannot be encoded, fails on its caller's own thread.
 *
 * <p><b>Close</b> is idempotent and the first cause wins: the worker leaves the pool, then every
 * pending future fails with a retryable {@link dev.panoptes.control.WorkerException} and every
 * queued dispatch as never sent.
 */
final class ConnectionActor {
    private static final Logger log = LoggerFactory.getLogger(ConnectionActor.class);

    enum Phase {
        /** Accepted; waiting for {@code register}. */
        HANDSHAKE,
        /** Registered: serving jobs. */
        OPEN,
        /** Closed; every future it held has been failed. */
        CLOSED
    }

    // ---- immutable, any thread
    private final SelectorLoop loop;
    private final ServerContext context;
    private final SocketChannel channel;
    private final SocketAddress remote;
    private final JobFailures failures;
    private final JobAssignments assignments;

    // ---- any thread: written by the selector thread (or once by the closer), read anywhere
    /** The first cause of the close; non-null exactly when the connection is closed or closing. */
    private final AtomicReference<Throwable> closeCause = new AtomicReference<>();
    /** Set at registration, before the worker is published; null during the handshake. */
    private volatile RemoteWorker worker;

    // ---- selector thread only
    private final Liveness liveness;
    private final ConnectionTransport transport;
    private final RegistrationHandshake handshake;
    private Phase phase = Phase.HANDSHAKE;
    /** This actor's index in its loop's list of actors, for O(1) removal. */
    int slot = -1;
    /** The earliest time the loop will call {@link #onTimer} for this actor; kept by the loop. */
    long timerMs = Long.MAX_VALUE;

    ConnectionActor(SelectorLoop loop, ServerContext context, SocketChannel channel, SocketAddress remote) {
        this.loop = loop;
        this.context = context;
        this.channel = channel;
        this.remote = remote;
        this.failures = new JobFailures(remote);
        this.liveness = new Liveness(context);
        this.transport = new ConnectionTransport(loop, this, context, channel, remote, liveness);
        this.handshake = new RegistrationHandshake(this, context, transport, remote);
        this.assignments = new JobAssignments(this, loop, context, failures, transport, liveness);
    }

    // ------------------------------------------------------------------ any thread

    /** The front door of {@link RemoteWorker#dispatch}; see {@link JobAssignments#enqueue}. */
    CompletableFuture<JobOutcome> enqueue(Job job) {
        return assignments.enqueue(job);
    }

    /** The worker, once registered; null during the handshake. Any thread. */
    RemoteWorker worker() {
        return worker;
    }

        /** True until the connection closes (a draining worker is still open). */
    boolean isOpen() {
        return closeCause.get() == null;
    }

    /** The first cause of the close, or null while open. */
    Throwable closeCause() {
        return closeCause.get();
    }

    /** True once the worker sent {@code drain}. */
    boolean isDraining() {
        return assignments.isDraining();
    }

    /** The job table; non-null once registered. */
    PendingJobs jobs() {
        return assignments.jobs();
    }

    /** Jobs assigned on this connection and not yet answered; updated as they change. */
    int pendingCount() {
        return assignments.pendingCount();
    }

    /** Dispatches waiting in the queue for a free slot. */
    int queuedCount() {
        return assignments.queuedCount();
    }

    /** Slots held by cancelled jobs the worker has not answered yet. */
    int unavailableSlots() {
        return assignments.unavailableSlots();
    }

    SocketAddress remoteAddress() {
        return remote;
    }

    /** Clears the ready signal; called by the loop just before {@link #onDispatchQueued}. */
    void clearSignal() {
        assignments.clearSignal();
    }

    /**
     * Milliseconds since the worker last sent a byte (a heartbeat, an answer), read by the
     * selector thread from its liveness clock: any thread may ask. The answer is completed on
     * the selector thread, so wait for it (with a timeout: a stopped loop never answers) and
     * attach no callbacks.
     */
    CompletableFuture<Long> silentMs() {
        CompletableFuture<Long> answer = new CompletableFuture<>();
        loop.execute(() -> answer.complete(liveness.silentMs(loop.nowMs())));
        return answer;
    }

    private String workerId() {
        return failures.workerId();
    }

    // ------------------------------------------------------------------ selector thread only

    /** Starts the handshake clock once the channel is registered with the loop's selector. */
    void onAdopted(SelectionKey key, long nowMs) {
        assert loop.isOwnerThread();
        transport.attach(key);
        liveness.accepted(nowMs);
        log.debug("worker=- job=- - accepted a connection from {}; waiting for register", remote);
    }

    /** Reads what the socket has and acts on every whole frame, then assigns what the answers made room for. */
    void onReadable() {
        assert loop.isOwnerThread();
        transport.read();
        if (phase == Phase.OPEN) {
            assignments.drainQueue();
        }
    }

    /** The socket can take more bytes: send what is buffered. */
    void onWritable() {
        assert loop.isOwnerThread();
        flush();
    }

    /** Dispatches were queued: assign as many as the worker has free slots for. */
    void onDispatchQueued() {
        assert loop.isOwnerThread();
        if (phase == Phase.OPEN) {
            assignments.drainQueue();
        }
    }

    /** Writes what is buffered without blocking; what the socket does not take waits for OP_WRITE. */
    void flush() {
        assert loop.isOwnerThread();
        transport.flush();
    }

    /**
     * Checks the handshake deadline, liveness, write progress and cancelled jobs, and sends a
     * heartbeat when the worker has heard nothing from us for an interval.
     *
     * @return the time of this actor's next deadline, {@code Long.MAX_VALUE} when closed
     */
    long onTimer(long nowMs) {
        assert loop.isOwnerThread();
        if (phase == Phase.HANDSHAKE) {
            long deadline = liveness.handshakeDeadlineMs();
            if (nowMs < deadline) {
                return deadline;
            }
            handshake.onTimeout();
            return Long.MAX_VALUE;
        }
        if (phase != Phase.OPEN) {
            return Long.MAX_VALUE;
        }
        if (liveness.isSilent(nowMs)) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " sent nothing for "
                    + liveness.silentMs(nowMs) + " ms (heartbeat timeout " + context.heartbeatTimeoutMs + " ms, "
                    + pendingCount() + " pending); is it frozen or cut off?"));
            return Long.MAX_VALUE;
        }
        if (liveness.isStalled(nowMs)) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " stopped reading: "
                    + transport.outSize() + " bytes for it have waited " + liveness.stalledMs(nowMs) + " ms without"
                    + " the socket taking any (write-stall timeout " + context.writeStallTimeoutMs + " ms, "
                    + pendingCount() + " pending)"));
            return Long.MAX_VALUE;
        }
        long cancelDeadline = assignments.cancelDeadlineMs();
        if (nowMs >= cancelDeadline) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " "
                    + assignments.cancelOverdue(nowMs)));
            return Long.MAX_VALUE;
        }
        if (liveness.isHeartbeatDue(nowMs)) {
            // Bytes still waiting to go out will tell the worker we live once it reads them; a
            // heartbeat behind them adds nothing, and skipping it keeps a non-reading worker's
            // buffer bounded.
            if (transport.isOutEmpty()) {
                transport.send(context.heartbeatFrame);
                log.debug("worker={} job=- - heartbeat sent", workerId());
            }
            liveness.sent(nowMs);
        }
        return Math.min(liveness.nextDeadlineMs(), cancelDeadline);
    }

    /**
     * Ends the connection: the first cause wins and is chained into every failure. The worker
     * leaves the pool first; then the job table is taken and cleared, and each job fails
     * retryably: a job on the wire as lost, a queued one as never sent. Idempotent.
     */
    void close(Throwable cause) {
        assert loop.isOwnerThread();
        if (phase == Phase.CLOSED) {
            return;
        }
        Phase was = phase;
        phase = Phase.CLOSED;
        if (was == Phase.OPEN) {
            // Out of the pool before any of its jobs fail: a scheduler hearing of a failure
            // must not pick this worker again.
            try {
                context.events.onLost(worker, cause);
            } catch (RuntimeException e) {
                log.warn("worker={} job=- - the lost-worker handler failed; carrying on", workerId(), e);
            }
        }
        closeCause.compareAndSet(null, cause);
        Throwable first = closeCause.get();
        transport.close(first);
        context.unregistered.release(channel);
        loop.removeActor(this);

        long upMs = loop.nowMs() - liveness.acceptedAtMs();
        if (was == Phase.OPEN) {
            assignments.failAll(first, remote, upMs);
        } else {
            handshake.onClosed(first, upMs);
        }
    }

    /** True once {@link #close} began; selector thread (the parts stop acting on the rest of a read). */
    boolean isClosedHere() {
        return phase == Phase.CLOSED;
    }

    /** True once the worker registered and until the connection closes; selector thread. */
    boolean isRegistered() {
        return phase == Phase.OPEN;
    }

    /** A whole frame arrived. */
    void onMessage(Message message) {
        if (phase == Phase.OPEN) {
            onWorkerMessage(message);
        } else if (phase == Phase.HANDSHAKE) {
            Message.Register register = handshake.check(message);
            if (register != null) {
                onRegistered(register);
            }
        }
        // CLOSED: the rest of a buffer that held the fatal frame; ignore it.
    }

    private void onRegistered(Message.Register register) {
        int capacity = context.handshake.clampCapacity(register.capacity());
        // Buffers and queues are for registered workers only.
        assignments.registered(new PendingJobs(capacity, context.options.dispatchQueueCapacity()));
        worker = new RemoteWorker(this, register.workerId(), capacity, register.labels(), register.models());
        failures.registered(register.workerId());
        transport.frameLimit(context.options.maxFrameBytes());
        context.unregistered.release(channel);
        phase = Phase.OPEN;
        transport.send(context.registeredFrame);
        long now = loop.nowMs();
        liveness.sent(now);
        loop.timerAt(this, now + Math.min(context.heartbeatIntervalMs, context.heartbeatTimeoutMs));
        handshake.logRegistered(register, capacity);
        try {
            context.events.onRegistered(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the registration handler failed; carrying on", register.workerId(), e);
        }
    }

    private void onWorkerMessage(Message message) {
        if (message instanceof Message.Result result) {
            assignments.onResult(result.outcome());
        } else if (message instanceof Message.Failed failed) {
            assignments.onFailed(failed);
        } else if (message instanceof Message.Heartbeat) {
            if (log.isDebugEnabled()) {
                log.debug("worker={} job=- - heartbeat received", workerId());
            }
        } else if (message instanceof Message.Drain) {
            assignments.onDrain(worker);
        } else if (message instanceof Message.Throttled throttled) {
            context.events.onThrottled(worker, throttled.count());
        } else {
            // PROTOCOL.md rule 3: a late register, or a coordinator's message sent back to us, is a slip.
            log.debug("worker={} job=- - ignoring a {} frame from a registered worker", workerId(), message.type());
        }
    }

    /** The TLS handshake's delegated tasks finished on the server's TLS executor: go on with it. */
    void onTlsTasksDone() {
        assert loop.isOwnerThread();
        if (phase == Phase.CLOSED) {
            return;
        }
        if (transport.unwrapAndFeed() && phase == Phase.OPEN) {
            assignments.drainQueue();
        }
        transport.scheduleFlush();
    }

    /** The peer ended the stream cleanly, between frames. */
    void onPeerClosed() {
        close(new EOFException((phase == Phase.OPEN ? "worker " + workerId() : "the peer") + " at " + remote
                + " closed the connection"));
    }

    /** A frame broke the protocol: refuses an unregistered peer, closes on a registered one. */
    void onProtocolError(ProtocolException e) {
        if (phase == Phase.HANDSHAKE) {
            handshake.onProtocolError(e);
            return;
        }
        log.warn("worker={} job=- - protocol error from {}, closing the connection ({} pending jobs fail"
                + " retryably): {}; is the worker's release compatible with the coordinator's?", workerId(), remote,
                pendingCount(), e.getMessage());
        close(e);
    }

    /**
     * A TLS failure (unknown CA, expired certificate, a plaintext client, an alert from the
     * worker): closes this connection only, with one line naming the peer and the reason.
     */
    void onTlsFailure(SSLException e) {
        String reason = transport.peerSentPlaintext()
                ? "the peer sent plaintext, not TLS: a worker started without --tls (start it with --tls, and --tls-ca"
                        + " when this coordinator's CA is not in its JVM's trust store)"
                : TlsSession.reason(e);
        if (phase == Phase.HANDSHAKE && transport.isTlsHandshakePending()) {
            handshake.onTlsHandshakeFailure(reason);
        } else {
            log.warn("worker={} job=- - TLS error on the connection from {}: {}; closing it", workerId(), remote,
                    reason);
        }
        close(e);
    }

    /** Bytes of TLS buffers held now: 0 in plaintext and before the peer's first byte. Selector thread (tests). */
    int tlsBufferBytes() {
        return transport.tlsBufferBytes();
    }

    /** Bytes read from the socket so far; selector thread (tests). */
    long bytesRead() {
        assert loop.isOwnerThread();
        return transport.bytesRead();
    }

    /** Bytes the socket has taken from us so far; selector thread (tests). */
    long bytesWritten() {
        assert loop.isOwnerThread();
        return transport.bytesWritten();
    }

    @Override
    public String toString() {
        return "ConnectionActor[" + workerId() + " at " + remote + ", " + (isOpen() ? "open" : "closed") + "]";
    }
}
