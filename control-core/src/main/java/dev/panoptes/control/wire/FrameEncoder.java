package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * Encodes messages into whole frames (length prefix and JSON body, exactly as
 * {@link MessageCodec#encodeFrame} does) in a buffer it reuses, with a JSON generator it reuses:
 * encoding one message allocates nothing, where making a generator per message (its buffers, its
 * context) was most of the cost of encoding a small one. The frame stays here until the next
 * {@link #encode}: copy it out ({@link #toFrame()}) or append it ({@link #appendTo}).
 *
 * <p>Not thread-safe: one per thread, such as a connection's event-loop thread, or a
 * {@link ThreadLocal} for threads that dispatch jobs. A message that fails to encode leaves the
 * encoder ready for the next one.
 */
public final class FrameEncoder {
    /** A buffer grown past this is dropped after the frame that grew it, so one huge frame does not pin memory. */
    private static final int RETAIN_BYTES = 64 * 1024;
    private static final byte[] NO_PREFIX = new byte[MessageCodec.LENGTH_PREFIX_BYTES];

    private final MessageCodec codec;
    private Buffer buffer;
    private JsonGenerator generator;

    /** An encoder writing JSON the way {@code codec} does. */
    public FrameEncoder(MessageCodec codec) {
        this.codec = codec;
        reset();
    }

    /**
     * Encodes {@code message} as one frame, replacing the previous one. No limit is checked here:
     * compare {@link #bodyLength()} with yours.
     *
     * @return this encoder
     * @throws IllegalArgumentException when the message cannot be written as JSON (a vignette's
     *                                  metadata that Jackson cannot write, named in the message)
     */
    public FrameEncoder encode(Message message) {
        if (buffer.capacity() > RETAIN_BYTES) {
            reset();
        }
        buffer.reset();
        buffer.write(NO_PREFIX, 0, NO_PREFIX.length);
        try {
            codec.writeMessage(generator, message);
            generator.flush();
        } catch (IOException | RuntimeException | StackOverflowError e) {
            // Half an object in the generator's state: start the next message afresh.
            reset();
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw new IllegalArgumentException("cannot encode a " + message.type() + " message: "
                    + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        }
        buffer.patchLength();
        return this;
    }

    /** The encoded frame's body length in bytes (without the 4-byte prefix). */
    public int bodyLength() {
        return buffer.size() - MessageCodec.LENGTH_PREFIX_BYTES;
    }

    /** A copy of the whole encoded frame, prefix included. */
    public byte[] toFrame() {
        return buffer.copy();
    }

    /** Appends the whole encoded frame to {@code out}. */
    public void appendTo(OutboundBuffer out) {
        buffer.appendTo(out);
    }

    private void reset() {
        buffer = new Buffer();
        try {
            generator = codec.mapper().getFactory().createGenerator(buffer, JsonEncoding.UTF8);
        } catch (IOException e) {
            // An in-memory stream cannot fail to open.
            throw new UncheckedIOException(e);
        }
        // One frame per root value: no separator between them.
        generator.setRootValueSeparator(null);
    }

    /** The frame being built, with access to its array for patching and copying without a detour. */
    private static final class Buffer extends ByteArrayOutputStream {
        Buffer() {
            super(1024);
        }

        int capacity() {
            return buf.length;
        }

        void patchLength() {
            int bodyBytes = count - MessageCodec.LENGTH_PREFIX_BYTES;
            buf[0] = (byte) (bodyBytes >>> 24);
            buf[1] = (byte) (bodyBytes >>> 16);
            buf[2] = (byte) (bodyBytes >>> 8);
            buf[3] = (byte) bodyBytes;
        }

        byte[] copy() {
            return Arrays.copyOf(buf, count);
        }

        void appendTo(OutboundBuffer out) {
            out.append(buf, 0, count);
        }
    }
}
