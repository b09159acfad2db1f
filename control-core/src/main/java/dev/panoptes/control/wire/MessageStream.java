package dev.panoptes.control.wire;

import dev.panoptes.control.ProtocolException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;
import java.util.Optional;

/**
 * A blocking, framed message channel over a socket, for simple peers: the worker and test
 * fakes. The coordinator's selector uses {@link FrameDecoder} instead.
 *
 * <p>{@link #send} may be called from any thread (one writer at a time, whole frames);
 * {@link #recv} from one reading thread at a time. {@link #close} from any thread, and it
 * unblocks a pending {@code recv}.
 */
public final class MessageStream implements Closeable {
    private static final Logger log = LoggerFactory.getLogger(MessageStream.class);

    private final Socket socket;
    private final MessageCodec codec;
    private final DataInputStream in;
    private final OutputStream out;
    private final Object writeLock = new Object();

    /**
     * Wraps a connected socket.
     *
     * @throws IOException when the socket's streams cannot be opened
     */
    public MessageStream(Socket socket, MessageCodec codec) throws IOException {
        this.socket = socket;
        this.codec = codec;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
    }

    /** Wraps a connected socket with the default 16 MiB frame limit. */
    public MessageStream(Socket socket) throws IOException {
        this(socket, new MessageCodec());
    }

    /**
     * Writes one whole frame and flushes it. Thread-safe: concurrent senders never interleave.
     *
     * @throws IOException       when the socket fails
     * @throws ProtocolException when the message is larger than the frame limit
     */
    public void send(Message message) throws IOException {
        byte[] frame = codec.encodeFrame(message);
        synchronized (writeLock) {
            out.write(frame);
            out.flush();
        }
    }

    /**
     * Writes several whole frames and flushes once, so that answers finished together leave in
     * one write. Thread-safe like {@link #send}: no other frame comes between them.
     *
     * @throws IOException       when the socket fails
     * @throws ProtocolException when a message is larger than the frame limit (nothing is sent)
     */
    public void sendAll(List<? extends Message> messages) throws IOException {
        byte[][] frames = new byte[messages.size()][];
        for (int i = 0; i < frames.length; i++) {
            frames[i] = codec.encodeFrame(messages.get(i));
        }
        synchronized (writeLock) {
            for (byte[] frame : frames) {
                out.write(frame);
            }
            out.flush();
        }
    }

    /**
     * Reads the next message, skipping messages of unknown type.
     *
     * @return the message, or empty at a clean end of stream (between frames)
     * @throws ProtocolException when a frame is malformed, over the limit, or cut short by the
     *                           end of the stream
     * @throws IOException       when the socket fails or times out
     */
    public Optional<Message> recv() throws IOException {
        while (true) {
            int first = in.read();
            if (first < 0) {
                return Optional.empty();
            }
            int length;
            byte[] body;
            try {
                length = (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8)
                        | in.readUnsignedByte();
                if (length == 0 || length < 0 || length > codec.maxFrameBytes()) {
                    throw new ProtocolException("frame length " + Integer.toUnsignedString(length)
                            + (length == 0 ? " is not allowed" : " exceeds the limit of " + codec.maxFrameBytes()
                            + " bytes") + " (from " + socket.getRemoteSocketAddress() + ")");
                }
                body = readBody(in, length);
            } catch (EOFException e) {
                throw new ProtocolException("stream from " + socket.getRemoteSocketAddress()
                        + " ended in the middle of a frame", e);
            }
            Optional<Message> message = codec.decode(body);
            if (message.isPresent()) {
                return message;
            }
            log.debug("ignoring a frame of unknown type from {}", socket.getRemoteSocketAddress());
        }
    }

    /** Reads a body in bounded chunks, so that a lying length costs only the bytes that really came. */
    private static byte[] readBody(InputStream in, int length) throws IOException {
        int chunk = Math.min(length, 64 * 1024);
        byte[] body = new byte[chunk];
        int filled = 0;
        while (filled < length) {
            if (filled == body.length) {
                body = java.util.Arrays.copyOf(body, (int) Math.min(length, 2L * body.length));
            }
            int n = in.read(body, filled, body.length - filled);
            if (n < 0) {
                throw new EOFException();
            }
            filled += n;
        }
        return body;
    }

    /** The socket underneath. */
    public Socket socket() {
        return socket;
    }

    /** Closes the socket; idempotent. A blocked {@link #recv} then fails with an IOException. */
    @Override
    public void close() throws IOException {
        socket.close();
    }
}
