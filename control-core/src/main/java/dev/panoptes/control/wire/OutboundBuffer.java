package dev.panoptes.control.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;

/**
 * The bytes a non-blocking connection still has to send: whole frames are appended, and every
 * frame queued in one pass of its event loop leaves in one {@code write} call. Both sides use
 * it: the coordinator's connections and the worker's session.
 *
 * <p>Unsent bytes are {@code buf[start, end)}. Nothing is allocated until the first frame; the
 * buffer grows with what is queued and shrinks back once it empties. How much can be queued is
 * bounded by the caller, not here (a coordinator's connection has at most {@code capacity}
 * unanswered assigns; a worker at most {@code capacity} answers), except that it never exceeds
 * what one array can hold.
 *
 * <p>Not thread-safe: owned by one connection's event-loop thread.
 */
public final class OutboundBuffer {
    /** The first allocation, made with the first frame. */
    public static final int INITIAL_BYTES = 4 * 1024;
    /** A buffer grown past this is dropped when it empties, so one big burst does not pin memory. */
    private static final int RETAIN_BYTES = 256 * 1024;
    private static final int MAX_BYTES = Integer.MAX_VALUE - 8;
    private static final byte[] NONE = new byte[0];

    private byte[] buf = NONE;
    private ByteBuffer view = ByteBuffer.wrap(buf);
    private int start;
    private int end;

    /** True when nothing is waiting to be sent. */
    public boolean isEmpty() {
        return start == end;
    }

    /** Bytes waiting to be sent. */
    public int size() {
        return end - start;
    }

    /**
     * Appends a whole frame encoded elsewhere.
     *
     * @throws IllegalStateException when the unsent bytes would no longer fit one array (about
     *                               2 GiB): the connection is beyond saving
     */
    public void appendFrame(byte[] frame) {
        append(frame, 0, frame.length);
    }

    /**
     * Appends {@code length} bytes of whole frames encoded elsewhere (a {@link FrameEncoder}'s).
     *
     * @throws IllegalStateException as {@link #appendFrame(byte[])}
     */
    public void append(byte[] bytes, int offset, int length) {
        ensureRoom(length);
        System.arraycopy(bytes, offset, buf, end, length);
        end += length;
    }

    /**
     * Writes as much as the channel takes without blocking.
     *
     * @return the number of bytes written
     * @throws IOException when the channel fails
     */
    public int writeTo(WritableByteChannel channel) throws IOException {
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

    private void ensureRoom(int extra) {
        if (end + extra <= buf.length) {
            return;
        }
        // Slide unsent bytes to the front first.
        if (start > 0) {
            int unsent = end - start;
            System.arraycopy(buf, start, buf, 0, unsent);
            start = 0;
            end = unsent;
            if (end + extra <= buf.length) {
                return;
            }
        }
        long needed = (long) end + extra;
        if (needed > MAX_BYTES) {
            throw new IllegalStateException("cannot queue " + extra + " more bytes for this connection: "
                    + end + " bytes are already waiting to be sent and an array holds at most " + MAX_BYTES);
        }
        int grown = (int) Math.min(MAX_BYTES, Math.max(Math.max(needed, INITIAL_BYTES), 2L * buf.length));
        buf = Arrays.copyOf(buf, grown);
        view = ByteBuffer.wrap(buf);
    }
}
