package dev.panoptes.worker;

import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.FrameEncoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.control.wire.OutboundBuffer;
import dev.panoptes.control.wire.PeerSpeaksTlsException;
import dev.panoptes.remote.tls.TlsSession;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The bytes of a worker's connection: the non-blocking socket and its selector, the TLS layer when
 * there is one, the frame decoder and encoder, and the outbound buffer. It turns reads into
 * whole messages and messages into writes, and knows nothing of what they mean.
 *
 * <p><b>Threads.</b> Everything belongs to the session's I/O thread, except {@link #wakeup()},
 * which any thread may call (it wakes the selector only when no wakeup is on its way), and
 * {@link #close()}, which the session calls once, on the I/O thread or on a thread closing a
 * session that never served.
 *
 * <p><b>Promises.</b> Writes never block: what the socket does not take waits in the outbound
 * buffer, with write interest on, for the next pass. Each readiness event reads at most 16
 * buffers (bounding a pass's latency) and hands every whole frame they hold to the caller, in
 * order. A write that fails in the middle of a pass is thrown by the next {@link #flush()}, so
 * that one place ends the session. With TLS, plaintext leaves only as fast as its ciphertext does,
 * and a handshake's delegated tasks run inline: the I/O thread has nothing else to serve until it
 * is done.
 */
final class SessionTransport {
    /**
     * Answers are written every this many, not only at the end of a pass: a read that brings a
     * whole window of jobs would otherwise leave the coordinator idle until the last one is
     * answered, then this thread idle while it sends the next window. Written in slices, the two
     * sides work at once (dispatch-session, K=256: 357k jobs/s in one write per pass, 672-877k in
     * slices of 32-64; K=64: 328k, 480-520k in slices of 32). One write per 32 answers costs
     * well under 0.1 us per answer; K=1 is unaffected.
     */
    static final int ANSWERS_PER_WRITE = 32;
    private static final int READ_BUFFER_BYTES = 64 * 1024;
    /** Reads per readiness event before the answers are written: bounds a pass's latency. */
    private static final int MAX_READS_PER_PASS = 16;

    private final SocketChannel channel;
    private final Selector selector;
    private final String coordinator;
    /** True while the I/O thread is awake or a wakeup is on its way: no need to wake it (again). */
    private final AtomicBoolean wakeupPending = new AtomicBoolean(true);

    // ---- I/O thread only
    /** The TLS layer under the framing; null for plaintext. */
    private final TlsSession tls;
    private final FrameDecoder decoder;
    private final FrameEncoder encoder;
    private final OutboundBuffer out = new OutboundBuffer();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
    private SelectionKey key;
    /**
     * The largest frame this worker sends: its own limit, or the coordinator's when it said a
     * smaller one at registration.
     */
    private long sendLimit;
    private boolean writeInterest;
    /** Answers queued since the last write. */
    private int unwritten;
    /** A write that failed in the middle of a pass, thrown by the next {@link #flush()}. */
    private IOException writeFailure;
    private boolean outputShut;
    private boolean endOfStream;
    /** When bytes last arrived; the jobs a read brings are stamped with it (one clock read per read). */
    private long lastReceivedNanos;

    /**
     * @param channel     a connected socket channel, closed by {@link #close()}
     * @param codec       encodes and decodes with this worker's frame limit
     * @param coordinator the coordinator's address, as text for messages
     */
    SessionTransport(SocketChannel channel, WorkerOptions options, MessageCodec codec, String coordinator)
            throws IOException {
        this.channel = channel;
        this.coordinator = coordinator;
        this.decoder = new FrameDecoder(codec);
        this.encoder = new FrameEncoder(codec);
        this.sendLimit = codec.maxFrameBytes();
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

    /** Makes the socket non-blocking and registers it for reads; the silence clock starts at {@code now}. */
    void open(long now) throws IOException {
        channel.configureBlocking(false);
        key = channel.register(selector, SelectionKey.OP_READ);
        lastReceivedNanos = now;
    }

    // ---- any thread

    /** Wakes the I/O thread from its select, unless a wakeup is on its way already. */
    void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    /** Closes the socket and the selector; idempotent. */
    void close() {
        Workers.closeQuietly(channel);
        Workers.closeQuietly(selector);
    }

    // ---- the I/O thread

    /**
     * Waits for readiness, a {@link #wakeup()} or {@code timeoutMs}; only polls when
     * {@code workWaiting} says there is work already, which it asks after clearing the wakeup
     * flag, so that work queued before that is never slept on.
     */
    void select(long timeoutMs, BooleanSupplier workWaiting) throws IOException {
        wakeupPending.set(false);
        if (workWaiting.getAsBoolean()) {
            wakeupPending.set(true);
            selector.selectNow();
            return;
        }
        selector.select(timeoutMs);
        wakeupPending.set(true);
    }

    /** Acts on what the last select found: reads (each whole message to {@code onMessage}), then writes. */
    void handleReadiness(Consumer<Message> onMessage) throws IOException {
        if (selector.selectedKeys().isEmpty()) {
            return;
        }
        selector.selectedKeys().clear();
        if (key.isValid() && key.isReadable()) {
            read(onMessage);
        }
        if (key.isValid() && key.isWritable()) {
            flush();
        }
    }

    /** Reads what the socket has and acts on every whole frame. */
    private void read(Consumer<Message> onMessage) throws IOException {
        if (tls != null) {
            readTls(onMessage);
            return;
        }
        for (int reads = 0; reads < MAX_READS_PER_PASS; reads++) {
            readBuffer.clear();
            int n = channel.read(readBuffer);
            if (n < 0) {
                endOfStream = true;
                requireWholeFrames();
                return;
            }
            if (n == 0) {
                return;
            }
            lastReceivedNanos = System.nanoTime();
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

    /** {@link #read} through TLS: ciphertext in, every whole frame of its plaintext acted on. */
    private void readTls(Consumer<Message> onMessage) throws IOException {
        for (int reads = 0; reads < MAX_READS_PER_PASS; reads++) {
            int n = tls.readNet();
            if (n < 0) {
                endOfStream = true;
                if (!tls.isHandshakeComplete()) {
                    throw new SSLHandshakeException("the coordinator closed the connection during the handshake"
                            + " (does it require a client certificate, --tls-cert and --tls-key? does it speak TLS?)");
                }
                requireWholeFrames();
                return;
            }
            if (n > 0) {
                lastReceivedNanos = System.nanoTime();
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

    private void requireWholeFrames() {
        if (decoder.isMidFrame()) {
            throw new ProtocolException("coordinator " + coordinator + " closed the connection in the middle"
                    + " of a frame");
        }
    }

    /** Queues one frame and writes it, with whatever is buffered; nothing once the output is shut. */
    void send(Message message) throws IOException {
        if (outputShut) {
            return;
        }
        encoder.encode(message).appendTo(out);
        flush();
    }

    /** Encodes an answer without queuing it. @return its frame body's length, to check against {@link #sendLimit()} */
    int encode(Message message) {
        return encoder.encode(message).bodyLength();
    }

    /** Queues the answer last {@link #encode encoded}, writing every {@link #ANSWERS_PER_WRITE} of them. */
    void queueEncoded() {
        encoder.appendTo(out);
        if (++unwritten >= ANSWERS_PER_WRITE) {
            flushEarly();
        }
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
    void flush() throws IOException {
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

    /** True when no frame waits in the outbound buffer (TLS records may still). */
    boolean nothingQueued() {
        return out.isEmpty();
    }

    /** True when every byte queued has been written, TLS records included. */
    boolean allWritten() {
        return out.isEmpty() && (tls == null || !tls.hasPendingOutput());
    }

    /**
     * Ends our side of the stream (after TLS's close_notify): a FIN behind the last answer, so
     * that the coordinator reads them all before our end of stream (a close with unread input
     * could reset and lose them). Nothing is written after it.
     */
    void shutdownOutput() throws IOException {
        if (tls != null) {
            tls.closeOutbound();
        }
        channel.shutdownOutput();
        outputShut = true;
    }

    boolean outputShut() {
        return outputShut;
    }

    /** True once the coordinator ended its stream (a FIN or TLS's close_notify). */
    boolean endOfStream() {
        return endOfStream;
    }

    long lastReceivedNanos() {
        return lastReceivedNanos;
    }

    long sendLimit() {
        return sendLimit;
    }

    /** Lowers the largest frame this worker sends to what the coordinator accepts. */
    void lowerSendLimit(long coordinatorMaxFrameBytes) {
        sendLimit = Math.min(sendLimit, coordinatorMaxFrameBytes);
    }

    /** A TLS failure before the handshake completed, said as one: which coordinator, why, what to check. */
    Exception asTlsFailure(Exception e) {
        if (tls != null && e instanceof SSLException ssl && !tls.isHandshakeComplete()) {
            if (tls.peerSentPlaintext()) {
                return TlsHandshakeException.plaintextCoordinator(coordinator, ssl);
            }
            return new TlsHandshakeException(coordinator, TlsSession.reason(ssl), ssl);
        }
        return e;
    }
}
