package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.json.UTF8StreamJsonParser;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * One Jackson parser that reads the frames one thread decodes, one after the other, as a
 * stream of root values: each frame's bytes are fed to it when that frame is read. Making a
 * parser per frame (its context objects, symbol table, text buffer, input state) was about half
 * of what decoding a {@code result} frame allocated on the coordinator's selector thread; a
 * parser kept across frames reuses all of them.
 *
 * <p>A frame is read from here only when it is exactly one JSON object followed by nothing but
 * whitespace ({@link #finish} checks the rest of the frame); anything else, and any fault while
 * reading, discards the parser ({@link #discard}), and the frame is read again the careful way
 * by {@link MessageDecoder}, as before. The parser is renewed after {@value #RENEW_AFTER_BYTES}
 * bytes of frames, so that what it keeps from them (field names in its symbol table, a text
 * buffer grown by a long string) is bounded by that, whatever a peer sends.
 *
 * <p>Not thread-safe: one per thread, kept by {@link MessageDecoder} in a {@link ThreadLocal}.
 */
final class ReusedParser {
    /** Bytes of frames after which the parser is closed and a new one made for the next frame. */
    static final long RENEW_AFTER_BYTES = 1L << 20;

    private final JsonFactory factory;
    private final Feed feed = new Feed();
    private final WhitespaceCheck rest = new WhitespaceCheck();
    private JsonParser parser;
    private long bytesFed;
    /** True between {@link #open} and {@link #finish} / {@link #discard}: a nested decode gets its own parser. */
    private boolean inUse;

    ReusedParser(JsonFactory factory) {
        this.factory = factory;
    }

    /**
     * The parser, about to read the frame {@code body[offset, offset + length)} as its next
     * root value; or null when this thread's parser is in use already (a decode inside a
     * decode) or the factory does not give a UTF-8 stream parser for the first frame (then
     * the caller reads the frame with a parser of its own).
     *
     * @throws IOException when making the parser fails
     */
    JsonParser open(byte[] body, int offset, int length) throws IOException {
        if (inUse) {
            return null;
        }
        feed.set(body, offset, length);
        if (parser == null) {
            JsonParser fresh = factory.createParser(feed);
            if (!(fresh instanceof UTF8StreamJsonParser)) {
                // Its first bytes looked like another encoding: not one to keep for UTF-8 frames.
                fresh.close();
                feed.set(null, 0, 0);
                return null;
            }
            parser = fresh;
            bytesFed = 0;
        }
        bytesFed += length;
        inUse = true;
        return parser;
    }

    /**
     * The frame's object was read to its end: checks that only whitespace follows it in the
     * frame, and makes the parser ready for the next frame.
     *
     * @return true when the rest of the frame was whitespace; false when it held more (the
     *         parser is discarded then, and the frame is to be read the careful way)
     */
    boolean finish() throws IOException {
        rest.clean = true;
        boolean clean;
        try {
            parser.releaseBuffered(rest);
            clean = rest.clean && feed.restIsWhitespace();
        } catch (IOException | RuntimeException e) {
            discard();
            throw e;
        }
        if (!clean || bytesFed >= RENEW_AFTER_BYTES) {
            discard();
        } else {
            feed.set(null, 0, 0);
            inUse = false;
        }
        return clean;
    }

    /** Closes and drops the parser (after a fault, or to renew it); the next frame gets a new one. */
    void discard() {
        JsonParser p = parser;
        parser = null;
        inUse = false;
        feed.set(null, 0, 0);
        if (p != null) {
            try {
                p.close();
            } catch (IOException | RuntimeException e) {
                // Closing an in-memory parser releases its buffers; nothing to report.
            }
        }
    }

    private static boolean isWhitespace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    /** The current frame's bytes, as the parser's input stream; ends with the frame. */
    private static final class Feed extends InputStream {
        private byte[] bytes;
        private int pos;
        private int end;

        void set(byte[] bytes, int offset, int length) {
            this.bytes = bytes;
            this.pos = offset;
            this.end = offset + length;
        }

        boolean restIsWhitespace() {
            for (int i = pos; i < end; i++) {
                if (!isWhitespace(bytes[i])) {
                    return false;
                }
            }
            pos = end;
            return true;
        }

        @Override
        public int read() {
            return pos < end ? bytes[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (pos >= end) {
                return -1;
            }
            int n = Math.min(len, end - pos);
            System.arraycopy(bytes, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public int available() {
            return end - pos;
        }

        @Override
        public void close() {
            // The frame's bytes belong to the caller; the parser's end of input closes nothing.
        }
    }

    /** Receives what the parser had read ahead past the object's end, and notes whether it is all whitespace. */
    private static final class WhitespaceCheck extends OutputStream {
        boolean clean = true;

        @Override
        public void write(int b) {
            clean &= isWhitespace((byte) b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                clean &= isWhitespace(b[i]);
            }
        }
    }
}
