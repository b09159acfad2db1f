package dev.panoptes.bench.dispatch;

import java.nio.ByteBuffer;

/**
 * Counts whole length-prefixed frames (PROTOCOL.md's 4-byte big-endian length, then the body) in
 * a byte stream without looking at the bodies: the framing work of the raw echo floor, and
 * nothing more. A frame may be split across any reads, and one read may hold many frames.
 *
 * <p>Not thread-safe: one per connection, on its reading thread.
 */
final class FrameScanner {
    private final int maxFrameBytes;
    private int headerBytes;
    private int length;
    private int bodyLeft;

    FrameScanner(int maxFrameBytes) {
        this.maxFrameBytes = maxFrameBytes;
    }

    /**
     * Consumes every remaining byte of {@code src}.
     *
     * @return the number of frames that ended in it
     * @throws IllegalStateException on a length of 0 or above the limit
     */
    int scan(ByteBuffer src) {
        int frames = 0;
        while (src.hasRemaining()) {
            if (bodyLeft > 0) {
                int take = Math.min(bodyLeft, src.remaining());
                src.position(src.position() + take);
                bodyLeft -= take;
                if (bodyLeft == 0) {
                    frames++;
                }
                continue;
            }
            length = (length << 8) | (src.get() & 0xff);
            if (++headerBytes == 4) {
                if (length <= 0 || length > maxFrameBytes) {
                    throw new IllegalStateException("frame length " + Integer.toUnsignedString(length)
                            + " is outside 1.." + maxFrameBytes);
                }
                bodyLeft = length;
                headerBytes = 0;
                length = 0;
            }
        }
        return frames;
    }

    /** True between frames. */
    boolean atFrameBoundary() {
        return headerBytes == 0 && bodyLeft == 0;
    }

    /** A frame of {@code bodyBytes} filler bytes ('x') behind its length prefix. */
    static byte[] fillerFrame(int bodyBytes) {
        byte[] frame = new byte[4 + bodyBytes];
        ByteBuffer.wrap(frame).putInt(bodyBytes);
        for (int i = 4; i < frame.length; i++) {
            frame[i] = 'x';
        }
        return frame;
    }
}
