package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.PeerSpeaksTlsException;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.OutboundBuffer;
import dev.panoptes.remote.tls.TlsSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One worker connection: its socket, its handshake, the messages it exchanges, its liveness.
 * Its jobs and the capacity rule over them are in {@link PendingJobs}; its clocks in
 * {@link Liveness}.
 *
 * <p><b>Threads.</b> Exactly one thread, the selector thread of {@link #loop}, reads and writes
 * the socket and touches the fields under "selector thread only" below; those methods assert
 * it. Other threads reach the actor only through {@link #enqueue} (which encodes the job on the
 * caller's thread, puts a {@link Dispatch} on the bounded queue and signals the loop),
 * {@link #onCancelRequested} (which posts a task to the loop) and the volatile read-only views.
 * Nothing here blocks except {@code enqueue}, on the caller's thread, while the queue is full.
 *
 * <p><b>Flow.</b> The loop calls the owner methods named for events: {@link #onReadable()},
 * {@link #onWritable()}, {@link #onDispatchQueued()}, {@link #onTimer(long)}, {@link #flush()}
 * and {@link #close(Throwable)}. Queued dispatches are drained only while a slot is free, so at
 * most {@code capacity} assigns are ever unanswered, which also bounds the outgoing buffer.
 *
 * <p><b>TLS</b> (when the server has a TLS context) sits between the socket and the framing, in a
 * {@link TlsSession}: ciphertext is read and unwrapped into the same {@link FrameDecoder}, and the
 * {@link OutboundBuffer} writes itself through the session, which wraps no more than the socket
 * takes, so frame limits, backpressure and the write-stall clock are as without TLS. Ciphertext
 * counts as a sign of life. The handshake's delegated tasks run on the server's TLS executor,
 * never here; reads pause while they run and {@link #onTlsTasksDone()} resumes. The TLS handshake
 * is part of the registration handshake, under the same timeout. A TLS failure closes this
 * connection only, with one log line naming the peer and the reason.
 *
 * <p><b>Futures</b> are completed after the selector thread decided them: it claims each
 * dispatch as it reads the answer (see {@link DispatchFuture}), and hands the completion to
 * {@link SelectorLoop#complete} / {@link SelectorLoop#fail}, which give the pass's completions to
 * the server's completion executor, or, with {@link ServerOptions#directCompletions()}, complete
 * them on this thread at the end of the read (the caller promised callbacks that never block).
 * A dispatch that finds the connection already gone, or a job that cannot be encoded, fails on
 * its caller's own thread.
 */
final class ConnectionActor {
    private static final Logger log = LoggerFactory.getLogger(ConnectionActor.class);
    /** Reads per readiness event, so that one flooding peer cannot starve its loop's other connections. */
    private static final int MAX_READS_PER_EVENT = 16;

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

    // ---- any thread: written by the selector thread (or once by the closer), read anywhere
    /** The first cause of the close; non-null exactly when the connection is closed or closing. */
    private final AtomicReference<Throwable> closeCause = new AtomicReference<>();
    /** True while the loop has this actor on its ready list and will call {@link #onDispatchQueued}. */
    private final AtomicBoolean signalled = new AtomicBoolean();
    private volatile boolean draining;
    /** Set at registration, before the worker is published; null during the handshake. */
    private volatile PendingJobs jobs;
    private volatile RemoteWorker worker;

    // ---- selector thread only
    private final FrameDecoder decoder;
    private final OutboundBuffer out = new OutboundBuffer();
    /** The TLS layer under the framing; null for plaintext. */
    private final TlsSession tls;
    private final Liveness liveness;
    private final Consumer<Message> onMessage = this::onMessage;
    private final PendingJobs.Assigner assigner = new PendingJobs.Assigner() {
        @Override
        public void assign(Dispatch d) {
            out.appendFrame(d.frame());
            liveness.sent(loop.nowMs());
            scheduleFlush();
            if (log.isDebugEnabled()) {
                log.debug("worker={} job={} - assigned ({} pending)", workerId(), d.job().id(), jobs.pendingCount() + 1);
            }
        }

        @Override
        public void refuse(Dispatch d, PendingJobs.Refusal why) {
            loop.fail(d.reply(), failures.refused(d.job().id(), why, jobs.pendingCount()));
        }

        @Override
        public void cancelled(Dispatch d) {
            sendCancel(d, loop.nowMs());
        }
    };
    private SelectionKey key;
    private Phase phase = Phase.HANDSHAKE;
    private boolean writeInterest;
    /** True while TLS tasks run: the unwrapped bytes wait for them, so reading more would only spin. */
    private boolean readPaused;
    private boolean flushScheduled;
    private boolean rejectionReported;
    /** Bytes read from and written to the socket (ciphertext with TLS), for tests that wait on them. */
    private long bytesRead;
    private long bytesWritten;
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
        // Small until the peer has registered: an unauthenticated peer gets nothing big from us.
        this.decoder = new FrameDecoder(context.codec, context.options.handshakeFrameBytes());
        this.liveness = new Liveness(context);
        this.tls = context.options.tls()
                ? TlsSession.server(context.options.tlsContext(), context.options.requireClientCertificate(), channel,
                        context.tlsTasksFor(remote), () -> loop.execute(this::onTlsTasksDone))
                : null;
    }

    // ------------------------------------------------------------------ any thread

    /**
     * The front door of {@link RemoteWorker#dispatch}: encodes the job, then queues it for the
     * selector thread, blocking while the queue is full.
     *
     * <p>The future fails with a {@link JobFailedException} when the job cannot be encoded or is
     * over the frame limit, and with a {@link DispatchRefusedException} (retryable, and the job
     * never reached the worker) when the connection is gone or draining, goes while the caller
     * waits, or the caller is interrupted while waiting (its interrupt flag is then restored). A
     * dispatch racing a close is always failed, by the closer or by this method: after putting,
     * it re-reads the close flag that the closer sets <em>before</em> taking the queue, so one of
     * the two sees the other.
     */
    CompletableFuture<JobOutcome> enqueue(Job job) {
        if (closeCause.get() != null) {
            return CompletableFuture.failedFuture(failures.notSent(job.id(), "its connection is closed ("
                    + JobFailures.describe(closeCause.get()) + ")"));
        }
        if (draining) {
            return CompletableFuture.failedFuture(failures.draining(job.id()));
        }
        byte[] frame;
        try {
            frame = context.encodeAssign(job, workerId());
        } catch (JobFailedException e) {
            return CompletableFuture.failedFuture(e);
        }
        PendingJobs table = jobs;
        DispatchFuture reply = new DispatchFuture(this, job.id());
        Dispatch dispatch = new Dispatch(job, frame, reply);
        if (SelectorLoop.onSelectorThread()) {
            // Called from a callback on a selector thread: waiting for room would stall every
            // connection of that thread, or wait for itself. Refuse instead.
            if (!table.offer(dispatch)) {
                reply.settle();
                reply.completeExceptionally(failures.notSent(job.id(), "its dispatch queue is full ("
                        + table.queuedCount() + " queued, " + table.pendingCount() + " pending) and dispatch was"
                        + " called on a selector thread, which must not block; dispatch from another thread"));
                return reply;
            }
        } else {
            try {
                table.put(dispatch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reply.settle();
                reply.completeExceptionally(failures.notSent(job.id(), "the caller was interrupted while waiting"
                        + " for room in its dispatch queue (" + table.queuedCount() + " queued, "
                        + table.pendingCount() + " pending)"));
                return reply;
            }
        }
        if (closeCause.get() != null) {
            failQueuedOnCallerThread();
        } else if (signalled.compareAndSet(false, true)) {
            loop.signal(this);
        }
        return reply;
    }

    /** A caller cancelled a dispatch future; the selector thread tells the worker. Any thread. */
    void onCancelRequested(DispatchFuture future) {
        if (closeCause.get() == null) {
            loop.execute(() -> onCancel(future));
        }
    }

    /** True until the connection closes (a draining worker is still open). */
    boolean isOpen() {
        return closeCause.get() == null;
    }

    /** True once the worker sent {@code drain}. */
    boolean isDraining() {
        return draining;
    }

    /** The job table; non-null once registered. */
    PendingJobs jobs() {
        return jobs;
    }

    /** Jobs assigned on this connection and not yet answered; updated as they change. */
    int pendingCount() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.pendingCount();
    }

    /** Dispatches waiting in the queue for a free slot. */
    int queuedCount() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.queuedCount();
    }

    /** Slots held by cancelled jobs the worker has not answered yet. */
    int unavailableSlots() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.unavailableSlots();
    }

    SocketAddress remoteAddress() {
        return remote;
    }

    /** Bytes of TLS buffers held now: 0 in plaintext and before the peer's first byte. Selector thread (tests). */
    int tlsBufferBytes() {
        return tls == null ? 0 : tls.bufferBytes();
    }

    /** Clears the ready signal; called by the loop just before {@link #onDispatchQueued}. */
    void clearSignal() {
        signalled.set(false);
    }

    private void failQueuedOnCallerThread() {
        Throwable cause = closeCause.get();
        for (Dispatch d : jobs.takeQueued()) {
            d.reply().completeExceptionally(failures.notSent(d.job().id(), "its connection closed ("
                    + JobFailures.describe(cause) + ")"));
        }
    }

    private String workerId() {
        return failures.workerId();
    }

    // ------------------------------------------------------------------ selector thread only

    /** Starts the handshake clock once the channel is registered with the loop's selector. */
    void onAdopted(SelectionKey key, long nowMs) {
        assert loop.isOwnerThread();
        this.key = key;
        liveness.accepted(nowMs);
        log.debug("worker=- job=- - accepted a connection from {}; waiting for register", remote);
    }

    /** Reads what the socket has and acts on every whole frame. */
    void onReadable() {
        assert loop.isOwnerThread();
        if (tls != null) {
            onReadableTls();
            return;
        }
        ByteBuffer buffer = loop.readBuffer();
        for (int reads = 0; reads < MAX_READS_PER_EVENT && phase != Phase.CLOSED; reads++) {
            buffer.clear();
            int n;
            try {
                n = channel.read(buffer);
            } catch (IOException e) {
                close(e);
                return;
            }
            if (n < 0) {
                onEndOfStream();
                return;
            }
            if (n == 0) {
                break;
            }
            bytesRead += n;
            // Bytes, not whole frames, are the sign of life: a large result arriving slowly is
            // a live worker, not a silent one.
            liveness.received(loop.nowMs());
            buffer.flip();
            try {
                decoder.feed(buffer, onMessage);
            } catch (ProtocolException e) {
                onProtocolError(e);
                return;
            }
            if (n < buffer.capacity()) {
                break;
            }
        }
        if (phase == Phase.OPEN) {
            drainQueue();
        }
    }

    /** {@link #onReadable()} through TLS: ciphertext in, every whole frame of its plaintext acted on. */
    private void onReadableTls() {
        for (int reads = 0; reads < MAX_READS_PER_EVENT && phase != Phase.CLOSED && !readPaused; reads++) {
            int n;
            try {
                n = tls.readNet();
            } catch (IOException e) {
                close(e);
                return;
            }
            if (n < 0) {
                onEndOfStream();
                return;
            }
            if (n > 0) {
                bytesRead += n;
                // Ciphertext counts: bytes, not frames or records, are the sign of life.
                liveness.received(loop.nowMs());
            }
            boolean full = tls.netInFull();
            if (!unwrapAndFeed()) {
                return;
            }
            if (n == 0 || !full) {
                break;
            }
        }
        if (phase == Phase.OPEN) {
            drainQueue();
        }
    }

    /**
     * Unwraps what has arrived and acts on every whole frame; schedules a flush for handshake
     * messages and for frames that waited for the handshake.
     *
     * @return false when the connection closed
     */
    private boolean unwrapAndFeed() {
        boolean wasComplete = tls.isHandshakeComplete();
        try {
            ByteBuffer plain;
            while (phase != Phase.CLOSED && (plain = tls.unwrap()) != null) {
                decoder.feed(plain, onMessage);
            }
        } catch (SSLException e) {
            onTlsFailure(e);
            return false;
        } catch (ProtocolException e) {
            onProtocolError(e);
            return false;
        }
        if (phase == Phase.CLOSED) {
            return false;
        }
        if (!wasComplete && tls.isHandshakeComplete() && log.isDebugEnabled()) {
            String cn = tls.peerCommonName();
            log.debug("worker=- job=- - TLS handshake with {} done ({}{}); waiting for register", remote,
                    tls.describe(), cn == null ? "" : ", client certificate CN=" + cn);
        }
        if (tls.isInboundDone()) {
            // close_notify: the peer ended the stream on purpose.
            onEndOfStream();
            return false;
        }
        if (tls.isTaskRunning() != readPaused) {
            readPaused = tls.isTaskRunning();
            updateInterest();
        }
        if (tls.hasPendingOutput() || !out.isEmpty()) {
            scheduleFlush();
        }
        return true;
    }

    /** The TLS handshake's delegated tasks finished on the server's TLS executor: go on with it. */
    private void onTlsTasksDone() {
        assert loop.isOwnerThread();
        if (phase == Phase.CLOSED) {
            return;
        }
        if (unwrapAndFeed() && phase == Phase.OPEN) {
            drainQueue();
        }
        scheduleFlush();
    }

    /**
     * A TLS failure (unknown CA, expired certificate, a plaintext client, an alert from the
     * worker): closes this connection only, with one line naming the peer and the reason.
     */
    private void onTlsFailure(SSLException e) {
        String reason = tls.peerSentPlaintext()
                ? "the peer sent plaintext, not TLS: a worker started without --tls (start it with --tls, and --tls-ca"
                        + " when this coordinator's CA is not in its JVM's trust store)"
                : TlsSession.reason(e);
        if (phase == Phase.HANDSHAKE && !tls.isHandshakeComplete()) {
            long unlogged = context.handshakeFailureLines.tryLine();
            if (unlogged >= 0) {
                String more = unlogged == 0 ? "" : " (" + unlogged + " more failed handshakes in the last interval"
                        + " were not logged)";
                if (reason.contains("overloaded") || tls.peerSentPlaintext()) {
                    log.warn("worker=- job=- - TLS handshake with {} failed: {}; closing that connection{}", remote,
                            reason, more);
                } else {
                    log.warn("worker=- job=- - TLS handshake with {} failed: {}; closing that connection (is it a"
                            + " worker started with --tls, whose --tls-ca trusts this coordinator's certificate{}?){}",
                            remote, reason, context.options.requireClientCertificate()
                                    ? ", with a --tls-cert issued by this coordinator's client CA" : "", more);
                }
            }
            rejectionReported = true;
            reportRejected("TLS handshake failed: " + reason);
        } else {
            log.warn("worker={} job=- - TLS error on the connection from {}: {}; closing it", workerId(), remote,
                    reason);
        }
        close(e);
    }

    private void updateInterest() {
        key.interestOps((readPaused ? 0 : SelectionKey.OP_READ) | (writeInterest ? SelectionKey.OP_WRITE : 0));
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
            drainQueue();
        }
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
            if (tls != null && !tls.isHandshakeComplete()) {
                onTlsFailure(new SSLHandshakeException("no TLS handshake completed within the handshake timeout of "
                        + context.handshakeTimeoutMs + " ms (a peer that went silent, or that does not speak TLS)"));
                return Long.MAX_VALUE;
            }
            reject("no register frame within the handshake timeout of " + context.handshakeTimeoutMs
                    + " ms; is this a Panoptes worker, and is it sending register first?", null, null, true);
            return Long.MAX_VALUE;
        }
        if (phase != Phase.OPEN) {
            return Long.MAX_VALUE;
        }
        if (liveness.isSilent(nowMs)) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " sent nothing for "
                    + liveness.silentMs(nowMs) + " ms (heartbeat timeout " + context.heartbeatTimeoutMs + " ms, "
                    + jobs.pendingCount() + " pending); is it frozen or cut off?"));
            return Long.MAX_VALUE;
        }
        if (liveness.isStalled(nowMs)) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " stopped reading: " + out.size()
                    + " bytes for it have waited " + liveness.stalledMs(nowMs) + " ms without the socket taking any"
                    + " (write-stall timeout " + context.writeStallTimeoutMs + " ms, " + jobs.pendingCount()
                    + " pending)"));
            return Long.MAX_VALUE;
        }
        PendingJobs.Cancelled oldest = jobs.oldestCancelled();
        long cancelDeadline = Long.MAX_VALUE;
        if (oldest != null) {
            cancelDeadline = oldest.cancelledAtMs() + context.heartbeatTimeoutMs;
            if (nowMs >= cancelDeadline) {
                close(new TimeoutException("worker " + workerId() + " at " + remote + " did not answer job "
                        + oldest.dispatch().job().id() + " within " + (nowMs - oldest.cancelledAtMs())
                        + " ms of the coordinator's cancel (" + jobs.cancelledCount() + " cancelled jobs unanswered);"
                        + " it cannot be trusted with its slots"));
                return Long.MAX_VALUE;
            }
        }
        if (liveness.isHeartbeatDue(nowMs)) {
            // Bytes still waiting to go out will tell the worker we live once it reads them; a
            // heartbeat behind them adds nothing, and skipping it keeps a non-reading worker's
            // buffer bounded.
            if (out.isEmpty()) {
                out.appendFrame(context.heartbeatFrame);
                scheduleFlush();
                log.debug("worker={} job=- - heartbeat sent", workerId());
            }
            liveness.sent(nowMs);
        }
        return Math.min(liveness.nextDeadlineMs(), cancelDeadline);
    }

    /** Writes what is buffered without blocking; what the socket does not take waits for OP_WRITE. */
    void flush() {
        assert loop.isOwnerThread();
        flushScheduled = false;
        if (phase == Phase.CLOSED) {
            return;
        }
        int written;
        boolean wantWrite;
        try {
            if (tls == null) {
                written = out.writeTo(channel);
                wantWrite = !out.isEmpty();
            } else {
                // Plaintext is taken only as fast as its ciphertext leaves; the rest waits in out.
                out.writeTo(tls);
                tls.flush();
                written = (int) Math.min(Integer.MAX_VALUE, tls.takeNetBytesWritten());
                wantWrite = tls.hasPendingOutput() || (!out.isEmpty() && tls.canSendData());
            }
        } catch (SSLException e) {
            onTlsFailure(e);
            return;
        } catch (IOException e) {
            close(e);
            return;
        }
        bytesWritten += written;
        liveness.wrote(loop.nowMs(), written, wantWrite);
        if (wantWrite != writeInterest) {
            writeInterest = wantWrite;
            updateInterest();
            if (wantWrite) {
                loop.timerAt(this, liveness.nextDeadlineMs());
            }
        }
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
        if (key != null) {
            key.cancel();
        }
        if (tls != null && tls.isHandshakeComplete() && !(first instanceof SSLException)) {
            // close_notify, best effort: the worker learns the stream ended where we meant it to.
            try {
                tls.closeOutbound();
            } catch (IOException | RuntimeException e) {
                first.addSuppressed(e);
            }
        }
        try {
            channel.close();
        } catch (IOException e) {
            first.addSuppressed(e);
        }
        context.unregistered.release(channel);
        loop.removeActor(this);

        long upMs = loop.nowMs() - liveness.acceptedAtMs();
        if (was == Phase.OPEN) {
            // Take, clear, then fail: no failure runs while the table is being walked.
            List<Dispatch> inFlight = jobs.takeAssigned();
            List<Dispatch> queued = jobs.takeParked();
            queued.addAll(jobs.takeQueued());
            for (Dispatch d : inFlight) {
                loop.fail(d.reply(), failures.lost(d.job().id(), first));
            }
            for (Dispatch d : queued) {
                loop.fail(d.reply(), failures.notSent(d.job().id(), "its connection closed ("
                        + JobFailures.describe(first) + ")"));
            }
            log.info("worker={} job=- - connection from {} lost after {} ms; failed {} pending and {} queued jobs"
                    + " retryably: {}", workerId(), remote, upMs, inFlight.size(), queued.size(),
                    JobFailures.describe(first));
        } else if (!rejectionReported) {
            rejectionReported = true;
            String reason = "connection closed before registering: " + JobFailures.describe(first);
            log.info("worker=- job=- - {} from {} after {} ms", reason, remote, upMs);
            reportRejected(reason);
        }
    }

    private void onMessage(Message message) {
        if (phase == Phase.OPEN) {
            onWorkerMessage(message);
        } else if (phase == Phase.HANDSHAKE) {
            onFirstFrame(message);
        }
        // CLOSED: the rest of a buffer that held the fatal frame; ignore it.
    }

    private void onFirstFrame(Message message) {
        if (!(message instanceof Message.Register register)) {
            reject("the first frame must be register, got " + message.type(), null, null, false);
            return;
        }
        String reason = context.handshake.rejectionReason(register);
        if (reason != null) {
            reject(reason, register.workerId(), null, false);
            return;
        }
        int capacity = context.handshake.clampCapacity(register.capacity());
        // Buffers and queues are for registered workers only.
        jobs = new PendingJobs(capacity, context.options.dispatchQueueCapacity());
        worker = new RemoteWorker(this, register.workerId(), capacity, register.labels(), register.models());
        failures.registered(register.workerId());
        decoder.limit(context.options.maxFrameBytes());
        context.unregistered.release(channel);
        phase = Phase.OPEN;
        out.appendFrame(context.registeredFrame);
        long now = loop.nowMs();
        liveness.sent(now);
        scheduleFlush();
        loop.timerAt(this, now + Math.min(context.heartbeatIntervalMs, context.heartbeatTimeoutMs));
        if (capacity != register.capacity()) {
            log.info("worker={} job=- - registered from {}{} with capacity {} (it asked for {}; clamped to [1, {}])"
                    + ", models {}, labels {}", register.workerId(), remote, transport(), capacity, register.capacity(),
                    context.options.maxCapacity(), register.models(), register.labels());
        } else {
            log.info("worker={} job=- - registered from {}{} with capacity {}, models {}, labels {}",
                    register.workerId(), remote, transport(), capacity, register.models(), register.labels());
        }
        try {
            context.events.onRegistered(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the registration handler failed; carrying on", register.workerId(), e);
        }
    }

    /** How the worker is connected, for the registration line: nothing for plaintext. */
    private String transport() {
        if (tls == null) {
            return "";
        }
        String cn = tls.peerCommonName();
        return " over " + tls.describe() + (cn == null ? "" : " with client certificate CN=" + cn);
    }

    private void onWorkerMessage(Message message) {
        if (message instanceof Message.Result result) {
            onResult(result.outcome());
        } else if (message instanceof Message.Failed failed) {
            onFailed(failed);
        } else if (message instanceof Message.Heartbeat) {
            if (log.isDebugEnabled()) {
                log.debug("worker={} job=- - heartbeat received", workerId());
            }
        } else if (message instanceof Message.Drain) {
            onDrain();
        } else if (message instanceof Message.Throttled throttled) {
            context.events.onThrottled(worker, throttled.count());
        } else {
            // PROTOCOL.md rule 3: a late register, or a coordinator's message sent back to us, is a slip.
            log.debug("worker={} job=- - ignoring a {} frame from a registered worker", workerId(), message.type());
        }
    }

    private void onResult(JobOutcome outcome) {
        Dispatch d = answered(outcome.jobId(), "result");
        if (d == null) {
            return;
        }
        try {
            outcome.requireAnswers(d.job());
        } catch (IllegalArgumentException e) {
            log.warn("worker={} job={} - the worker's result does not answer the job: {}; failing it retryably",
                    workerId(), outcome.jobId(), e.getMessage());
            loop.fail(d.reply(), failures.wrongResult(d.job().id(), e));
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - result received ({} pending)", workerId(), outcome.jobId(),
                    jobs.pendingCount());
        }
        loop.complete(d.reply(), outcome);
    }

    private void onFailed(Message.Failed failed) {
        Dispatch d = answered(failed.jobId(), "failed frame");
        if (d == null) {
            return;
        }
        ControlException error = failures.failedFrame(failed);
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - failed ({}): {}", workerId(), failed.jobId(),
                    failed.effectiveScope().wireName(), failed.error());
        }
        loop.fail(d.reply(), error);
    }

    /** The pending dispatch an answer is for, or null (logged) when there is none. */
    private Dispatch answered(JobId id, String what) {
        boolean wasCancelled = jobs.isCancelled(id);
        Dispatch d = jobs.answered(id);
        if (d == null) {
            if (wasCancelled) {
                log.debug("worker={} job={} - {} for a job the coordinator cancelled: its slot is free again",
                        workerId(), id, what);
            } else {
                log.info("worker={} job={} - ignoring a {} for a job not outstanding on this connection"
                        + " (late or duplicate answer)", workerId(), id, what);
            }
        }
        return d;
    }

    private void onCancel(DispatchFuture future) {
        assert loop.isOwnerThread();
        if (phase != Phase.OPEN) {
            return;
        }
        long now = loop.nowMs();
        Dispatch d = jobs.cancel(future, now);
        if (d == null) {
            // Still queued or parked (it never reached the worker), answered already, or acted on by a drain.
            return;
        }
        sendCancel(d, now);
    }

    /** Tells the worker to stop a job that moved to the cancelled jobs; it has a heartbeat timeout to let go. */
    private void sendCancel(Dispatch d, long now) {
        out.appendFrame(context.encodeFrame(new Message.Cancel(d.job().id(), "its attempt was cancelled by the"
                + " coordinator (deadline passed)")));
        liveness.sent(now);
        scheduleFlush();
        loop.timerAt(this, now + context.heartbeatTimeoutMs);
        log.info("worker={} job={} - cancelled; the worker has {} ms to let go of it", workerId(), d.job().id(),
                context.heartbeatTimeoutMs);
    }

    private void onDrain() {
        if (draining) {
            return;
        }
        log.info("worker={} job=- - draining: no new jobs; waiting for its {} pending answers", workerId(),
                jobs.pendingCount());
        // Out of the pool before it refuses anything, so that a scheduler does not pick it again.
        try {
            context.events.onDraining(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the draining handler failed; carrying on", workerId(), e);
        }
        draining = true;
        failQueuedWhileDraining();
    }

    private void failQueuedWhileDraining() {
        for (Dispatch d : jobs.takeParked()) {
            loop.fail(d.reply(), failures.draining(d.job().id()));
        }
        for (Dispatch d : jobs.takeQueued()) {
            loop.fail(d.reply(), failures.draining(d.job().id()));
        }
    }

    /** Moves queued dispatches to the wire while the worker has free slots. */
    private void drainQueue() {
        if (draining) {
            failQueuedWhileDraining();
            return;
        }
        jobs.drain(assigner, loop.nowMs());
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            loop.flushAtEndOfPass(this);
        }
    }

    private void onEndOfStream() {
        if (tls != null && !tls.isHandshakeComplete()) {
            onTlsFailure(new SSLHandshakeException("the peer closed the connection during the TLS handshake"
                    + " (a worker that does not trust this coordinator's certificate, or not a TLS client)"));
        } else if (decoder.isMidFrame()) {
            onProtocolError(new ProtocolException("the connection from " + remote
                    + " ended in the middle of a frame"));
        } else {
            close(new EOFException((phase == Phase.OPEN ? "worker " + workerId() : "the peer") + " at " + remote
                    + " closed the connection"));
        }
    }

    private void onProtocolError(ProtocolException e) {
        if (phase == Phase.HANDSHAKE && e instanceof PeerSpeaksTlsException) {
            // A rejected frame in plaintext would be noise to a TLS client: just close.
            String reason = "the peer speaks TLS but this coordinator serves plaintext: start the coordinator with"
                    + " --tls-cert and --tls-key, or the worker without --tls";
            log.warn("worker=- job=- - closing the connection from {}: {}", remote, reason);
            rejectionReported = true;
            reportRejected(reason);
            close(e);
            return;
        }
        if (phase == Phase.HANDSHAKE) {
            reject("protocol error before registering: " + e.getMessage(), null, e, false);
            return;
        }
        log.warn("worker={} job=- - protocol error from {}, closing the connection ({} pending jobs fail"
                + " retryably): {}; is the worker's release compatible with the coordinator's?", workerId(), remote,
                jobs.pendingCount(), e.getMessage());
        close(e);
    }

    /**
     * Refuses a connection in the handshake: sends {@code rejected} with the reason if the
     * socket takes it now (best effort, never waiting), reports it, then closes.
     *
     * @param retryable whether the same registration may pass later (told to the worker)
     */
    private void reject(String reason, String claimedWorkerId, Throwable cause, boolean retryable) {
        // Info, not warn: the server's listener reports it to whoever runs the coordinator.
        log.info("worker={} job=- - rejected the connection from {}: {}",
                claimedWorkerId == null ? "-" : claimedWorkerId, remote, reason);
        try {
            out.appendFrame(context.encodeFrame(new Message.Rejected(reason, retryable)));
            if (tls == null) {
                out.writeTo(channel);
                // A FIN right behind the frame, so that the worker reads the reason before the end.
                channel.shutdownOutput();
            } else if (tls.isHandshakeComplete()) {
                out.writeTo(tls);
                tls.closeOutbound();
                channel.shutdownOutput();
            }
        } catch (IOException | RuntimeException e) {
            log.debug("worker=- job=- - could not send rejected to {}: {}", remote, e.toString());
        }
        rejectionReported = true;
        reportRejected(reason);
        ProtocolException rejection = new ProtocolException("registration from " + remote + " rejected: " + reason);
        if (cause != null) {
            rejection.initCause(cause);
        }
        close(rejection);
    }

    private void reportRejected(String reason) {
        try {
            context.events.onRejected(remote, reason);
        } catch (RuntimeException e) {
            log.warn("worker=- job=- - the rejection handler failed; carrying on", e);
        }
    }

    /** Bytes read from the socket so far; selector thread (tests). */
    long bytesRead() {
        assert loop.isOwnerThread();
        return bytesRead;
    }

    /** Bytes the socket has taken from us so far; selector thread (tests). */
    long bytesWritten() {
        assert loop.isOwnerThread();
        return bytesWritten;
    }

    @Override
    public String toString() {
        return "ConnectionActor[" + workerId() + " at " + remote + ", " + (isOpen() ? "open" : "closed") + "]";
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
}
