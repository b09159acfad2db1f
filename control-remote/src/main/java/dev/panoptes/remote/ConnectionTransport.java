package dev.panoptes.remote;

import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.OutboundBuffer;
import dev.panoptes.remote.tls.TlsSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * The bytes of one worker connection: its socket, the {@link TlsSession} under the framing when
 * the server has TLS, the {@link FrameDecoder} that turns what arrives into messages, and the
 * {@link OutboundBuffer} where frames wait for the socket. It owns the selection key's interest
 * ops and the byte counters; what a message or a failure means is its {@link ConnectionActor}'s
 * to decide, which it is told of through the actor's event methods.
 *
 * <p><b>Threads.</b> Not thread-safe: made on the selector thread that adopts the connection and
 * used only there, like the actor that owns it. The TLS session's delegated tasks run on the
 * server's TLS executor; when they finish, the actor is posted back onto its loop.
 *
 * <p><b>Promises.</b> Plain or TLS, the framing above looks the same: frame limits, backpressure
 * and the write-stall clock work alike, since the session wraps no more than the socket takes.
 * Every byte read (ciphertext with TLS) counts as a sign of life. A read never takes more than
 * {@value #MAX_READS_PER_EVENT} reads per readiness event, so that one flooding peer cannot starve
 * its loop's other connections. Writes never block: what the socket does not take waits for
 * {@code OP_WRITE}.
 */
final class ConnectionTransport {
    private static final Logger log = LoggerFactory.getLogger(ConnectionTransport.class);
    /** Reads per readiness event, so that one flooding peer cannot starve its loop's other connections. */
    private static final int MAX_READS_PER_EVENT = 16;

    private final SelectorLoop loop;
    private final ConnectionActor owner;
    private final SocketChannel channel;
    private final SocketAddress remote;
    private final Liveness liveness;
    private final FrameDecoder decoder;
    private final OutboundBuffer out = new OutboundBuffer();
    /** The TLS layer under the framing; null for plaintext. */
    private final TlsSession tls;
    private final Consumer<Message> onMessage;
    private SelectionKey key;
    private boolean writeInterest;
    /** True while TLS tasks run: the unwrapped bytes wait for them, so reading more would only spin. */
    private boolean readPaused;
    private boolean flushScheduled;
    /** Bytes read from and written to the socket (ciphertext with TLS), for tests that wait on them. */
    private long bytesRead;
    private long bytesWritten;

    ConnectionTransport(SelectorLoop loop, ConnectionActor owner, ServerContext context, SocketChannel channel,
                        SocketAddress remote, Liveness liveness) {
        this.loop = loop;
        this.owner = owner;
        this.channel = channel;
        this.remote = remote;
        this.liveness = liveness;
        this.onMessage = owner::onMessage;
        // Small until the peer has registered: an unauthenticated peer gets nothing big from us.
        this.decoder = new FrameDecoder(context.codec, context.options.handshakeFrameBytes());
        this.tls = context.options.tls()
                ? TlsSession.server(context.options.tlsContext(), context.options.requireClientCertificate(), channel,
                        context.tlsTasksFor(remote), () -> loop.execute(owner::onTlsTasksDone))
                : null;
    }

    void attach(SelectionKey key) {
        this.key = key;
    }

    // ------------------------------------------------------------------ reading

    /**
     * Reads what the socket has and hands every whole frame to the actor, which may close the
     * connection on any of them; reports an end of stream, an I/O, protocol or TLS failure to the
     * actor, which closes.
     */
    void read() {
        if (tls != null) {
            readTls();
            return;
        }
        ByteBuffer buffer = loop.readBuffer();
        for (int reads = 0; reads < MAX_READS_PER_EVENT && !owner.isClosedHere(); reads++) {
            buffer.clear();
            int n;
            try {
                n = channel.read(buffer);
            } catch (IOException e) {
                owner.close(e);
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
                owner.onProtocolError(e);
                return;
            }
            if (n < buffer.capacity()) {
                break;
            }
        }
    }

    /** {@link #read()} through TLS: ciphertext in, every whole frame of its plaintext acted on. */
    private void readTls() {
        for (int reads = 0; reads < MAX_READS_PER_EVENT && !owner.isClosedHere() && !readPaused; reads++) {
            int n;
            try {
                n = tls.readNet();
            } catch (IOException e) {
                owner.close(e);
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
    }

    /**
     * Unwraps what has arrived and acts on every whole frame; schedules a flush for handshake
     * messages and for frames that waited for the handshake. TLS only.
     *
     * @return false when the connection closed
     */
    boolean unwrapAndFeed() {
        boolean wasComplete = tls.isHandshakeComplete();
        try {
            ByteBuffer plain;
            while (!owner.isClosedHere() && (plain = tls.unwrap()) != null) {
                decoder.feed(plain, onMessage);
            }
        } catch (SSLException e) {
            owner.onTlsFailure(e);
            return false;
        } catch (ProtocolException e) {
            owner.onProtocolError(e);
            return false;
        }
        if (owner.isClosedHere()) {
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

    private void onEndOfStream() {
        if (isTlsHandshakePending()) {
            owner.onTlsFailure(new SSLHandshakeException("the peer closed the connection during the TLS handshake"
                    + " (a worker that does not trust this coordinator's certificate, or not a TLS client)"));
        } else if (decoder.isMidFrame()) {
            owner.onProtocolError(new ProtocolException("the connection from " + remote
                    + " ended in the middle of a frame"));
        } else {
            owner.onPeerClosed();
        }
    }

    /** Raises the frame limit from the handshake's to the registered worker's. */
    void frameLimit(int maxFrameBytes) {
        decoder.limit(maxFrameBytes);
    }

    // ------------------------------------------------------------------ writing

    /** Buffers a frame and flushes it at the end of the loop's pass. */
    void send(byte[] frame) {
        out.appendFrame(frame);
        scheduleFlush();
    }

    /** True when nothing waits to be written (TLS records aside). */
    boolean isOutEmpty() {
        return out.isEmpty();
    }

    /** Plaintext bytes waiting for the socket. */
    int outSize() {
        return out.size();
    }

    void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            loop.flushAtEndOfPass(owner);
        }
    }

    /**
     * Writes what is buffered without blocking; what the socket does not take waits for
     * OP_WRITE. Tells the actor of a TLS or I/O failure; does nothing once it closed.
     */
    void flush() {
        flushScheduled = false;
        if (owner.isClosedHere()) {
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
            owner.onTlsFailure(e);
            return;
        } catch (IOException e) {
            owner.close(e);
            return;
        }
        bytesWritten += written;
        liveness.wrote(loop.nowMs(), written, wantWrite);
        if (wantWrite != writeInterest) {
            writeInterest = wantWrite;
            updateInterest();
            if (wantWrite) {
                loop.timerAt(owner, liveness.nextDeadlineMs());
            }
        }
    }

    private void updateInterest() {
        key.interestOps((readPaused ? 0 : SelectionKey.OP_READ) | (writeInterest ? SelectionKey.OP_WRITE : 0));
    }

    /**
     * Sends a last frame if the socket takes it now, never waiting, then ends the output, so that
     * the peer reads the frame before the end. Without a finished TLS handshake there is no
     * channel to send it on, and nothing is sent.
     */
    void sendLast(byte[] frame) throws IOException {
        out.appendFrame(frame);
        if (tls == null) {
            out.writeTo(channel);
            // A FIN right behind the frame, so that the worker reads the reason before the end.
            channel.shutdownOutput();
        } else if (tls.isHandshakeComplete()) {
            out.writeTo(tls);
            tls.closeOutbound();
            channel.shutdownOutput();
        }
    }

    /**
     * Cancels the key, sends close_notify when the TLS session is up and did not fail itself,
     * and closes the socket; failures are added to {@code first} as suppressed.
     */
    void close(Throwable first) {
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
    }

    // ------------------------------------------------------------------ views

    boolean isTls() {
        return tls != null;
    }

    /** True when the server has TLS and the handshake with this peer has not finished. */
    boolean isTlsHandshakePending() {
        return tls != null && !tls.isHandshakeComplete();
    }

    /** True when a TLS peer's first bytes were plaintext: a worker started without TLS. */
    boolean peerSentPlaintext() {
        return tls != null && tls.peerSentPlaintext();
    }

    /** How the worker is connected, for the registration line: nothing for plaintext. */
    String describe() {
        if (tls == null) {
            return "";
        }
        String cn = tls.peerCommonName();
        return " over " + tls.describe() + (cn == null ? "" : " with client certificate CN=" + cn);
    }

    /** Bytes of TLS buffers held now: 0 in plaintext and before the peer's first byte. */
    int tlsBufferBytes() {
        return tls == null ? 0 : tls.bufferBytes();
    }

    long bytesRead() {
        return bytesRead;
    }

    long bytesWritten() {
        return bytesWritten;
    }
}
