package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One worker connection: its socket, its handshake, its jobs in flight, its liveness.
 *
 * <p><b>Threads.</b> Exactly one thread, the selector thread of {@link #loop}, reads and writes
 * the socket and touches the fields under "selector thread only" below; those methods assert
 * it. Other threads reach the actor only through {@link #enqueue} (which puts a
 * {@link Dispatch} on the bounded {@link #queue} and signals the loop) and the volatile
 * read-only views ({@link #isOpen()}, {@link #pendingCount()}). Nothing here blocks except
 * {@code enqueue}, on the caller's thread, while the queue is full.
 *
 * <p><b>Flow.</b> The loop calls the owner methods named for events: {@link #onReadable()},
 * {@link #onWritable()}, {@link #onDispatchQueued()}, {@link #onTimer(long)}, {@link #flush()}
 * and {@link #close(Throwable)}. Queued dispatches are drained only while
 * {@code pending.size() < capacity}, so at most {@code capacity} assigns are ever unanswered,
 * which also bounds the outgoing buffer: a worker that stops reading holds at most
 * {@code capacity} assign frames (plus one {@code registered} and one heartbeat) in memory.
 *
 * <p><b>Futures</b> are never completed on the selector thread: completions go to
 * {@link SelectorLoop#complete} / {@link SelectorLoop#fail}, which hand them, one batch per loop
 * pass, to the server's completion executor. The only exception is a dispatch that finds the
 * connection already gone: it fails on its caller's own thread.
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
    private final BlockingQueue<Dispatch> queue;

    // ---- any thread: written by the selector thread (or once by the closer), read anywhere
    /** The first cause of the close; non-null exactly when the connection is closed or closing. */
    private final AtomicReference<Throwable> closeCause = new AtomicReference<>();
    /** True while the loop has this actor on its ready list and will call {@link #onDispatchQueued}. */
    private final AtomicBoolean signalled = new AtomicBoolean();
    private volatile boolean draining;
    private volatile int pendingCount;
    private volatile RemoteWorker worker;

    // ---- selector thread only
    private final FrameDecoder decoder;
    private final OutboundBuffer out = new OutboundBuffer();
    private final Map<JobId, Dispatch> pending = new HashMap<>();
    private final Consumer<Message> onMessage = this::onMessage;
    private SelectionKey key;
    private Phase phase = Phase.HANDSHAKE;
    private int capacity;
    private long acceptedAtMs;
    private long lastReceivedMs;
    private long lastSentMs;
    private boolean writeInterest;
    private boolean flushScheduled;
    private boolean rejectionReported;
    /** This actor's index in its loop's list of actors, for O(1) removal. */
    int slot = -1;

    ConnectionActor(SelectorLoop loop, ServerContext context, SocketChannel channel, SocketAddress remote) {
        this.loop = loop;
        this.context = context;
        this.channel = channel;
        this.remote = remote;
        this.queue = new ArrayBlockingQueue<>(context.options.dispatchQueueCapacity());
        this.decoder = new FrameDecoder(context.codec);
    }

    // ------------------------------------------------------------------ any thread

    /**
     * The front door of {@link RemoteWorker#dispatch}: queues the job for the selector thread,
     * blocking while the queue is full.
     *
     * <p>The future fails with a retryable {@link WorkerException} when the connection is gone
     * or draining, goes while the caller waits, or the caller is interrupted while waiting (its
     * interrupt flag is then restored). A dispatch racing a close is always failed, by the
     * closer or by this method: after putting, it re-reads the close flag that the closer sets
     * <em>before</em> draining the queue, so one of the two sees the other.
     */
    CompletableFuture<JobOutcome> enqueue(Job job) {
        CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
        if (closeCause.get() != null) {
            reply.completeExceptionally(lost(job.id(), closeCause.get()));
            return reply;
        }
        if (draining) {
            reply.completeExceptionally(drainingFailure(job.id()));
            return reply;
        }
        Dispatch dispatch = new Dispatch(job, reply);
        if (SelectorLoop.onSelectorThread()) {
            // Called from a listener on a selector thread: waiting for room would stall every
            // connection of that thread, or wait for itself. Refuse instead.
            if (!queue.offer(dispatch)) {
                reply.completeExceptionally(new WorkerException("cannot queue job " + job.id() + " for worker "
                        + workerId() + " at " + remote + ": its dispatch queue is full (" + queue.size()
                        + " queued, " + pendingCount + " pending) and dispatch was called on a selector thread,"
                        + " which must not block; dispatch from another thread"));
                return reply;
            }
        } else {
            try {
                queue.put(dispatch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reply.completeExceptionally(new WorkerException("interrupted while waiting for room in the dispatch"
                        + " queue of worker " + workerId() + " at " + remote + " (" + queue.size() + " queued, "
                        + pendingCount + " pending); job " + job.id() + " was not dispatched", e));
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

    /** True until the connection closes (a draining worker is still open). */
    boolean isOpen() {
        return closeCause.get() == null;
    }

    /** True once the worker sent {@code drain}. */
    boolean isDraining() {
        return draining;
    }

    /** Jobs assigned on this connection and not yet answered; updated as they change. */
    int pendingCount() {
        return pendingCount;
    }

    /** Dispatches waiting in the queue for a free slot. */
    int queuedCount() {
        return queue.size();
    }

    SocketAddress remoteAddress() {
        return remote;
    }

    /** Clears the ready signal; called by the loop just before {@link #onDispatchQueued}. */
    void clearSignal() {
        signalled.set(false);
    }

    private void failQueuedOnCallerThread() {
        Throwable cause = closeCause.get();
        Dispatch d;
        while ((d = queue.poll()) != null) {
            d.reply().completeExceptionally(lost(d.job().id(), cause));
        }
    }

    private String workerId() {
        RemoteWorker w = worker;
        return w == null ? "-" : w.id();
    }

    // ------------------------------------------------------------------ selector thread only

    /** Starts the handshake clock once the channel is registered with the loop's selector. */
    void onAdopted(SelectionKey key, long nowMs) {
        assert loop.isOwnerThread();
        this.key = key;
        this.acceptedAtMs = nowMs;
        this.lastReceivedMs = nowMs;
        this.lastSentMs = nowMs;
        log.debug("worker=- job=- - accepted a connection from {}; waiting for register", remote);
    }

    /** Reads what the socket has and acts on every whole frame. */
    void onReadable() {
        assert loop.isOwnerThread();
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
            buffer.flip();
            long framesBefore = decoder.framesDecoded();
            try {
                decoder.feed(buffer, onMessage);
            } catch (ProtocolException e) {
                onProtocolError(e);
                return;
            }
            if (decoder.framesDecoded() != framesBefore) {
                // PROTOCOL.md rule 4: every frame received, of any type, is a sign of life.
                lastReceivedMs = loop.nowMs();
            }
            if (n < buffer.capacity()) {
                break;
            }
        }
        if (phase == Phase.OPEN) {
            drainQueue();
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
            drainQueue();
        }
    }

    /**
     * Checks the handshake deadline and liveness, and sends a heartbeat when the worker has
     * heard nothing from us for an interval.
     *
     * @return the time of this actor's next deadline, {@code Long.MAX_VALUE} when closed
     */
    long onTimer(long nowMs) {
        assert loop.isOwnerThread();
        if (phase == Phase.HANDSHAKE) {
            long deadline = acceptedAtMs + context.handshakeTimeoutMs;
            if (nowMs < deadline) {
                return deadline;
            }
            reject("no register frame within the handshake timeout of " + context.handshakeTimeoutMs
                    + " ms; is this a Panoptes worker, and is it sending register first?", null);
            return Long.MAX_VALUE;
        }
        if (phase != Phase.OPEN) {
            return Long.MAX_VALUE;
        }
        long silentMs = nowMs - lastReceivedMs;
        if (silentMs >= context.heartbeatTimeoutMs) {
            close(new TimeoutException("worker " + workerId() + " at " + remote + " sent nothing for " + silentMs
                    + " ms (heartbeat timeout " + context.heartbeatTimeoutMs + " ms, " + pending.size()
                    + " pending); is it frozen or cut off?"));
            return Long.MAX_VALUE;
        }
        if (nowMs - lastSentMs >= context.heartbeatIntervalMs) {
            // Bytes still waiting to go out will tell the worker we live once it reads them; a
            // heartbeat behind them adds nothing, and skipping it keeps a non-reading worker's
            // buffer bounded.
            if (out.isEmpty()) {
                out.appendFrame(context.heartbeatFrame);
                scheduleFlush();
                log.debug("worker={} job=- - heartbeat sent", workerId());
            }
            lastSentMs = nowMs;
        }
        return Math.min(lastReceivedMs + context.heartbeatTimeoutMs, lastSentMs + context.heartbeatIntervalMs);
    }

    /** Writes what is buffered without blocking; what the socket does not take waits for OP_WRITE. */
    void flush() {
        assert loop.isOwnerThread();
        flushScheduled = false;
        if (phase == Phase.CLOSED) {
            return;
        }
        try {
            out.writeTo(channel);
        } catch (IOException e) {
            close(e);
            return;
        }
        boolean wantWrite = !out.isEmpty();
        if (wantWrite != writeInterest) {
            writeInterest = wantWrite;
            key.interestOps(wantWrite ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }
    }

    /**
     * Ends the connection: the first cause wins and is chained into every failure. Copies and
     * clears the pending table and the queue, then fails each entry retryably. Idempotent.
     */
    void close(Throwable cause) {
        assert loop.isOwnerThread();
        if (phase == Phase.CLOSED) {
            return;
        }
        closeCause.compareAndSet(null, cause);
        Throwable first = closeCause.get();
        Phase was = phase;
        phase = Phase.CLOSED;
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException e) {
            first.addSuppressed(e);
        }
        loop.removeActor(this);

        // Copy, clear, then fail: no failure runs while the table is being walked.
        List<Dispatch> inFlight = new ArrayList<>(pending.values());
        pending.clear();
        pendingCount = 0;
        List<Dispatch> queued = new ArrayList<>();
        queue.drainTo(queued);
        for (Dispatch d : inFlight) {
            loop.fail(d.reply(), lost(d.job().id(), first));
        }
        for (Dispatch d : queued) {
            loop.fail(d.reply(), lost(d.job().id(), first));
        }

        long upMs = loop.nowMs() - acceptedAtMs;
        if (was == Phase.OPEN) {
            log.info("worker={} job=- - connection from {} lost after {} ms; failed {} pending and {} queued jobs"
                    + " retryably: {}", workerId(), remote, upMs, inFlight.size(), queued.size(), describe(first));
            try {
                context.events.onLost(worker, first);
            } catch (RuntimeException e) {
                log.warn("worker={} job=- - the lost-worker handler failed; carrying on", workerId(), e);
            }
        } else if (!rejectionReported) {
            rejectionReported = true;
            String reason = "connection closed before registering: " + describe(first);
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
            reject("the first frame must be register, got " + message.type(), null);
            return;
        }
        String reason = context.handshake.rejectionReason(register);
        if (reason != null) {
            reject(reason, register.workerId());
            return;
        }
        capacity = context.handshake.clampCapacity(register.capacity());
        worker = new RemoteWorker(this, register.workerId(), capacity, register.labels());
        phase = Phase.OPEN;
        out.appendFrame(context.registeredFrame);
        lastSentMs = loop.nowMs();
        scheduleFlush();
        loop.timerAt(lastSentMs + Math.min(context.heartbeatIntervalMs, context.heartbeatTimeoutMs));
        if (capacity != register.capacity()) {
            log.info("worker={} job=- - registered from {} with capacity {} (it asked for {}; clamped to [1, {}])"
                    + ", labels {}", register.workerId(), remote, capacity, register.capacity(),
                    context.options.maxCapacity(), register.labels());
        } else {
            log.info("worker={} job=- - registered from {} with capacity {}, labels {}",
                    register.workerId(), remote, capacity, register.labels());
        }
        try {
            context.events.onRegistered(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the registration handler failed; carrying on", register.workerId(), e);
        }
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
        } else {
            // PROTOCOL.md rule 3: a late register, or a coordinator's message sent back to us, is a slip.
            log.debug("worker={} job=- - ignoring a {} frame from a registered worker", workerId(), message.type());
        }
    }

    private void onResult(JobOutcome outcome) {
        Dispatch d = pending.remove(outcome.jobId());
        if (d == null) {
            log.info("worker={} job={} - ignoring a result for a job not outstanding on this connection"
                    + " (late or duplicate answer)", workerId(), outcome.jobId());
            return;
        }
        pendingCount = pending.size();
        try {
            outcome.requireAnswers(d.job());
        } catch (IllegalArgumentException e) {
            log.warn("worker={} job={} - the worker's result does not answer the job: {}; failing it retryably",
                    workerId(), outcome.jobId(), e.getMessage());
            loop.fail(d.reply(), new WorkerException("worker " + workerId() + " at " + remote
                    + " sent a result that does not answer job " + d.job().id() + ": " + e.getMessage()
                    + "; another worker may do better", e));
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - result received ({} pending)", workerId(), outcome.jobId(), pending.size());
        }
        loop.complete(d.reply(), outcome);
    }

    private void onFailed(Message.Failed failed) {
        Dispatch d = pending.remove(failed.jobId());
        if (d == null) {
            log.info("worker={} job={} - ignoring a failed frame for a job not outstanding on this connection"
                    + " (late or duplicate answer)", workerId(), failed.jobId());
            return;
        }
        pendingCount = pending.size();
        ControlException error;
        if (failed.retryable()) {
            error = new WorkerException("worker " + workerId() + " at " + remote + " could not complete job "
                    + failed.jobId() + " (retryable): " + failed.error());
        } else {
            error = new JobFailedException("worker " + workerId() + " at " + remote + " failed job "
                    + failed.jobId() + " (not retryable): " + failed.error());
        }
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - failed (retryable={}): {}", workerId(), failed.jobId(), failed.retryable(),
                    failed.error());
        }
        loop.fail(d.reply(), error);
    }

    private void onDrain() {
        if (draining) {
            return;
        }
        draining = true;
        log.info("worker={} job=- - draining: no new jobs; waiting for its {} pending answers", workerId(),
                pending.size());
        try {
            context.events.onDraining(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the draining handler failed; carrying on", workerId(), e);
        }
        failQueuedWhileDraining();
    }

    private void failQueuedWhileDraining() {
        List<Dispatch> queued = new ArrayList<>();
        queue.drainTo(queued);
        for (Dispatch d : queued) {
            loop.fail(d.reply(), drainingFailure(d.job().id()));
        }
    }

    /** Moves queued dispatches to the wire while the worker has free slots. */
    private void drainQueue() {
        if (draining) {
            failQueuedWhileDraining();
            return;
        }
        List<Dispatch> batch = loop.scratch();
        int room;
        while ((room = capacity - pending.size()) > 0 && phase == Phase.OPEN) {
            if (queue.drainTo(batch, room) == 0) {
                break;
            }
            for (int i = 0; i < batch.size(); i++) {
                assign(batch.get(i));
            }
            batch.clear();
        }
    }

    private void assign(Dispatch d) {
        JobId id = d.job().id();
        if (d.reply().isDone()) {
            // Cancelled (or otherwise completed) by its caller while queued: nobody waits for it.
            return;
        }
        if (pending.containsKey(id)) {
            loop.fail(d.reply(), new JobFailedException("job " + id + " is already pending on worker " + workerId()
                    + " at " + remote + " (" + pending.size() + " pending): the same job id was dispatched twice to"
                    + " one connection; this second dispatch was refused and the first one goes on"));
            return;
        }
        try {
            context.encodeAssign(d.job(), out);
        } catch (ProtocolException tooBig) {
            loop.fail(d.reply(), new JobFailedException(tooBig.getMessage() + "; raise the limit on both sides or"
                    + " split the job", tooBig));
            return;
        }
        pending.put(id, d);
        pendingCount = pending.size();
        lastSentMs = loop.nowMs();
        scheduleFlush();
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - assigned ({} pending)", workerId(), id, pending.size());
        }
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            loop.flushAtEndOfPass(this);
        }
    }

    private void onEndOfStream() {
        if (decoder.isMidFrame()) {
            onProtocolError(new ProtocolException("the connection from " + remote
                    + " ended in the middle of a frame"));
        } else {
            close(new EOFException((phase == Phase.OPEN ? "worker " + workerId() : "the peer") + " at " + remote
                    + " closed the connection"));
        }
    }

    private void onProtocolError(ProtocolException e) {
        if (phase == Phase.HANDSHAKE) {
            reject("protocol error before registering: " + e.getMessage(), null, e);
            return;
        }
        log.warn("worker={} job=- - protocol error from {}, closing the connection ({} pending jobs fail"
                + " retryably): {}; is the worker's release compatible with the coordinator's?", workerId(), remote,
                pending.size(), e.getMessage());
        close(e);
    }

    private void reject(String reason, String claimedWorkerId) {
        reject(reason, claimedWorkerId, null);
    }

    /**
     * Refuses a connection in the handshake: sends {@code rejected} with the reason if the
     * socket takes it now (best effort, never waiting), reports it, then closes.
     */
    private void reject(String reason, String claimedWorkerId, Throwable cause) {
        log.warn("worker={} job=- - rejected the connection from {}: {}",
                claimedWorkerId == null ? "-" : claimedWorkerId, remote, reason);
        try {
            out.appendFrame(context.encodeFrame(new Message.Rejected(reason)));
            out.writeTo(channel);
            // A FIN right behind the frame, so that the worker reads the reason before the end.
            channel.shutdownOutput();
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

    private WorkerException lost(JobId jobId, Throwable cause) {
        return new WorkerException("worker connection lost: worker " + workerId() + " at " + remote
                + " went away before answering job " + jobId + " (" + describe(cause) + "); the job may be sent again",
                cause);
    }

    private WorkerException drainingFailure(JobId jobId) {
        return new WorkerException("worker " + workerId() + " at " + remote + " is draining (shutting down) and takes"
                + " no new jobs; job " + jobId + " was not assigned");
    }

    private static String describe(Throwable cause) {
        String message = cause.getMessage();
        return message == null ? cause.getClass().getSimpleName() : message;
    }

    @Override
    public String toString() {
        return "ConnectionActor[" + workerId() + " at " + remote + ", " + (isOpen() ? "open" : "closed") + "]";
    }
}
