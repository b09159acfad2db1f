package dev.panoptes.control.wire;

import dev.panoptes.control.ProtocolException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Turns a byte stream into messages, incrementally and without blocking: feed it whatever a
 * read returned, and it hands every whole frame to a sink. A frame may be split across any
 * number of reads, and one read may hold many frames.
 *
 * <p>A length prefix is checked against the limit <em>before</em> any buffer is sized for it,
 * and a frame body buffer grows with the bytes actually received, never to the announced
 * length up front: a peer that announces 16 MiB and sends 10 bytes costs us about 10 bytes.
 *
 * <p>Not thread-safe: one decoder per connection, used by the thread that reads it.
 */
public final class FrameDecoder {
    private static final Logger log = LoggerFactory.getLogger(FrameDecoder.class);
    private static final int INITIAL_BODY_BYTES = 4096;

    private final MessageCodec codec;
    private int maxFrameBytes;

    private final byte[] header = new byte[MessageCodec.LENGTH_PREFIX_BYTES];
    private int headerFilled;
    /** Body of the frame being assembled; null between frames. */
    private byte[] body;
    private int bodyLength;
    private int bodyFilled;
    private long framesDecoded;

    /** A decoder enforcing the codec's frame limit. */
    public FrameDecoder(MessageCodec codec) {
        this(codec, codec.maxFrameBytes());
    }

    /**
     * A decoder enforcing a lower limit than the codec's for now, such as a small one until a
     * peer has authenticated; {@link #limit(int)} raises it later.
     *
     * @throws IllegalArgumentException when the limit is below 1 or above the codec's
     */
    public FrameDecoder(MessageCodec codec, int maxFrameBytes) {
        this.codec = codec;
        limit(maxFrameBytes);
    }

    /**
     * Changes the frame limit for frames whose length has not been read yet.
     *
     * @throws IllegalArgumentException when the limit is below 1 or above the codec's
     */
    public void limit(int maxFrameBytes) {
        if (maxFrameBytes < 1 || maxFrameBytes > codec.maxFrameBytes()) {
            throw new IllegalArgumentException("frame limit must be between 1 and the codec's "
                    + codec.maxFrameBytes() + " bytes, got " + maxFrameBytes);
        }
        this.maxFrameBytes = maxFrameBytes;
    }

    /**
     * Consumes every remaining byte of {@code src}, passing each whole message to {@code sink}
     * in order. Messages of an unknown type are skipped (logged at debug).
     *
     * @return the number of messages passed to the sink
     * @throws ProtocolException when a length is 0 or above the limit, or a body is not a valid
     *                           message; the decoder must not be fed again after that
     */
    public int feed(ByteBuffer src, Consumer<? super Message> sink) {
        int delivered = 0;
        while (src.hasRemaining()) {
            if (body == null) {
                if (headerFilled == 0 && src.remaining() >= MessageCodec.LENGTH_PREFIX_BYTES) {
                    int length = checkLength(src.getInt());
                    if (src.hasArray() && src.remaining() >= length) {
                        // Fast path: the whole body is already here; decode it in place.
                        int at = src.arrayOffset() + src.position();
                        src.position(src.position() + length);
                        delivered += deliver(src.array(), at, length, sink);
                        continue;
                    }
                    startBody(length);
                } else {
                    while (headerFilled < header.length && src.hasRemaining()) {
                        header[headerFilled++] = src.get();
                    }
                    if (headerFilled < header.length) {
                        break;
                    }
                    headerFilled = 0;
                    startBody(checkLength(ByteBuffer.wrap(header).getInt()));
                }
            }
            int wanted = bodyLength - bodyFilled;
            int take = Math.min(wanted, src.remaining());
            ensureBodyRoom(bodyFilled + take);
            src.get(body, bodyFilled, take);
            bodyFilled += take;
            if (bodyFilled == bodyLength) {
                byte[] whole = body;
                int length = bodyLength;
                body = null;
                bodyFilled = 0;
                bodyLength = 0;
                delivered += deliver(whole, 0, length, sink);
            }
        }
        return delivered;
    }

    /** True when part of a frame has been received and the rest has not: an end of stream now truncates it. */
    public boolean isMidFrame() {
        return headerFilled > 0 || body != null;
    }

    /** Frames decoded so far, including those of unknown type. */
    public long framesDecoded() {
        return framesDecoded;
    }

    private int checkLength(int length) {
        // The prefix is unsigned: a negative int is a length of 2^31 or more.
        if (length == 0) {
            throw new ProtocolException("frame length 0 is not allowed: a frame holds one JSON object");
        }
        if (framesDecoded == 0 && PeerSpeaksTlsException.isTlsRecordHeader(length)) {
            // No first frame is anywhere near this long (the first is register or registered).
            throw new PeerSpeaksTlsException(length);
        }
        if (length < 0 || length > maxFrameBytes) {
            throw new ProtocolException("frame length " + Integer.toUnsignedString(length)
                    + " exceeds the limit of " + maxFrameBytes + " bytes");
        }
        return length;
    }

    private void startBody(int length) {
        bodyLength = length;
        bodyFilled = 0;
        body = new byte[Math.min(length, INITIAL_BODY_BYTES)];
    }

    private void ensureBodyRoom(int needed) {
        if (needed > body.length) {
            int grown = (int) Math.min((long) bodyLength, Math.max(needed, 2L * body.length));
            body = Arrays.copyOf(body, grown);
        }
    }

    private int deliver(byte[] bytes, int offset, int length, Consumer<? super Message> sink) {
        framesDecoded++;
        Message message = codec.decodeOrNull(bytes, offset, length);
        if (message == null) {
            log.debug("ignoring a frame of unknown type ({} bytes)", length);
            return 0;
        }
        sink.accept(message);
        return 1;
    }
}
