package dev.panoptes.remote;

import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.MessageCodec;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;

/**
 * The bytes a connection still has to send: frames are encoded straight into it (no array per
 * frame), and every frame queued in one loop pass leaves in one {@code write} call.
 *
 * <p>Unsent bytes are {@code buf[start, end)}. The buffer grows with what is queued and shrinks
 * back once it empties; how much can be queued is bounded by the caller, not here (a
 * connection has at most {@code capacity} unanswered assigns, see {@link ConnectionActor}).
 *
 * <p>Not thread-safe: owned by one connection's selector thread.
 */
final class OutboundBuffer extends OutputStream {
    static final int INITIAL_BYTES = 4 * 1024;
    /** A buffer grown past this is dropped when it empties, so one big burst does not pin memory. */
    private static final int RETAIN_BYTES = 256 * 1024;

    private byte[] buf = new byte[INITIAL_BYTES];
    private ByteBuffer view = ByteBuffer.wrap(buf);
    private int start;
    private int end;
    /** Index of the open frame's length prefix, or -1 when no frame is open. */
    private int frameAt = -1;

    /** True when nothing is waiting to be sent. */
    boolean isEmpty() {
        return start == end;
    }

    /** Bytes waiting to be sent. */
    int size() {
        return end - start;
    }

    /** Opens a frame: reserves its 4-byte length prefix. The body follows through {@link #write}. */
    void beginFrame() {
        assert frameAt < 0 : "a frame is already open";
        ensureRoom(MessageCodec.LENGTH_PREFIX_BYTES);
        frameAt = end;
        end += MessageCodec.LENGTH_PREFIX_BYTES;
    }

    /**
     * Closes the open frame by writing its length.
     *
     * @param jobId the job the frame assigns, named in the exception
     *
     * @throws ProtocolException when the body exceeds {@code maxFrameBytes}; the frame is then
     *                           removed as if never begun
     */
    void endFrame(int maxFrameBytes, Object jobId) {
        assert frameAt >= 0 : "no frame is open";
        int bodyBytes = end - frameAt - MessageCodec.LENGTH_PREFIX_BYTES;
        int at = frameAt;
        frameAt = -1;
        if (bodyBytes > maxFrameBytes) {
            end = at;
            throw new ProtocolException("cannot send job " + jobId + ": its assign frame of " + bodyBytes
                    + " bytes exceeds the frame limit of " + maxFrameBytes + " bytes (maxFrameBytes)");
        }
        buf[at] = (byte) (bodyBytes >>> 24);
        buf[at + 1] = (byte) (bodyBytes >>> 16);
        buf[at + 2] = (byte) (bodyBytes >>> 8);
        buf[at + 3] = (byte) bodyBytes;
    }

    /** Drops the open frame, if any, after its encoding failed. */
    void abortFrame() {
        if (frameAt >= 0) {
            end = frameAt;
            frameAt = -1;
        }
    }

    /** Appends a whole frame encoded elsewhere. */
    void appendFrame(byte[] frame) {
        assert frameAt < 0 : "a frame is open";
        write(frame, 0, frame.length);
    }

    /**
     * Writes as much as the channel takes without blocking; only whole frames are offered.
     *
     * @return the number of bytes written
     * @throws IOException when the channel fails
     */
    int writeTo(WritableByteChannel channel) throws IOException {
        assert frameAt < 0 : "a frame is open";
        if (start == end) {
            return 0;
        }
        view.limit(end).position(start);
        int written = 0;
        while (view.hasRemaining()) {
            int n = channel.write(view);
            if (n <= 0) {
                break;
            }
            written += n;
        }
        start = view.position();
        if (start == end) {
            start = 0;
            end = 0;
            if (buf.length > RETAIN_BYTES) {
                buf = new byte[INITIAL_BYTES];
                view = ByteBuffer.wrap(buf);
            }
        }
        return written;
    }

    @Override
    public void write(int b) {
        ensureRoom(1);
        buf[end++] = (byte) b;
    }

    @Override
    public void write(byte[] src, int offset, int length) {
        ensureRoom(length);
        System.arraycopy(src, offset, buf, end, length);
        end += length;
    }

    /** Ignored: bytes leave only through {@link #writeTo}. Jackson closes its target when done. */
    @Override
    public void close() {
    }

    private void ensureRoom(int extra) {
        if (end + extra <= buf.length) {
            return;
        }
        // Slide unsent bytes to the front first (the open frame's offset slides with them).
        if (start > 0) {
            int unsent = end - start;
            System.arraycopy(buf, start, buf, 0, unsent);
            if (frameAt >= 0) {
                frameAt -= start;
            }
            start = 0;
            end = unsent;
            if (end + extra <= buf.length) {
                return;
            }
        }
        long needed = (long) end + extra;
        if (needed > Integer.MAX_VALUE - 8) {
            throw new OutOfMemoryError("outbound buffer cannot hold " + needed + " bytes");
        }
        int grown = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * buf.length));
        buf = Arrays.copyOf(buf, grown);
        view = ByteBuffer.wrap(buf);
    }
}
