package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Vignette;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Maps {@link Message}s to and from the JSON of PROTOCOL.md, and frames them: the wire codec's
 * public face, over one writer ({@link MessageEncoder}) and one streaming reader
 * ({@link MessageDecoder}, with {@link PayloadReader} for jobs and outcomes), so that a field is
 * added in one place for each direction.
 *
 * <p>Decoding is strict about types (a string where an integer belongs is a
 * {@link ProtocolException} naming the field) and lenient about additions (unknown fields are
 * ignored; an unknown {@code type} decodes to empty). Encoding writes exactly the protocol's
 * field names, leaving out optional fields that are absent.
 *
 * <p>Thread-safe and cheap to share; one instance per process is typical.
 */
public final class MessageCodec {
    /** PROTOCOL.md's default frame limit: 16 MiB. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

    /** The longest string a frame or a suite's line may hold, in characters: 256 Mi. */
    public static final int MAX_STRING_CHARS = 256 * 1024 * 1024;

    /** Bytes of a frame's length prefix. */
    public static final int LENGTH_PREFIX_BYTES = 4;

    private final ObjectMapper mapper;
    private final int maxFrameBytes;
    private final MessageEncoder encoder;
    private final MessageDecoder decoder;
    private final VignetteLineDecoder lines;

    /** A codec with the default 16 MiB frame limit. */
    public MessageCodec() {
        this(DEFAULT_MAX_FRAME_BYTES);
    }

    /**
     * @param maxFrameBytes the largest frame body this codec encodes, and its decoders accept
     * @throws IllegalArgumentException when not positive
     */
    public MessageCodec(int maxFrameBytes) {
        if (maxFrameBytes < 1) {
            throw new IllegalArgumentException("maxFrameBytes must be at least 1, got " + maxFrameBytes);
        }
        this.maxFrameBytes = maxFrameBytes;
        // Jackson's default cap on one string (20 million characters) would refuse a long-context
        // prompt with its own jargon. Frames are bounded by maxFrameBytes before they are parsed,
        // and a suite's vignettes are checked against the frame limit when the run is planned,
        // so only a bound against the absurd is kept here.
        JsonFactory json = JsonFactory.builder().streamReadConstraints(StreamReadConstraints.builder()
                .maxStringLength(MAX_STRING_CHARS).build()).build();
        this.mapper = new ObjectMapper(json).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        this.encoder = new MessageEncoder(mapper);
        this.decoder = new MessageDecoder(mapper);
        this.lines = new VignetteLineDecoder(mapper, decoder.payloads());
    }

    /** The largest frame body, in bytes, that this codec encodes and its decoders accept. */
    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    /** The Jackson mapper behind this codec, for callers that map payload objects themselves. */
    public ObjectMapper mapper() {
        return mapper;
    }

    // ---------------------------------------------------------------- encoding

    /** The JSON body of a message, without the length prefix. */
    public byte[] encode(Message message) {
        FrameBuffer out = new FrameBuffer(256);
        encoder.write(message, out);
        return out.toByteArray();
    }

    /**
     * A whole frame: the 4-byte big-endian length followed by the JSON body.
     *
     * @throws ProtocolException when the body exceeds {@link #maxFrameBytes()}
     */
    public byte[] encodeFrame(Message message) {
        FrameBuffer out = new FrameBuffer(256);
        out.write(new byte[LENGTH_PREFIX_BYTES], 0, LENGTH_PREFIX_BYTES);
        encoder.write(message, out);
        int bodyBytes = out.size() - LENGTH_PREFIX_BYTES;
        if (bodyBytes > maxFrameBytes) {
            throw new ProtocolException("cannot send a " + message.type() + " frame of " + bodyBytes
                    + " bytes: the frame limit is " + maxFrameBytes + " bytes");
        }
        return out.withLengthPrefix(bodyBytes);
    }

    /**
     * The bytes a vignette takes inside a job's {@code assign} frame (its JSON object, as an
     * {@code assign} frame writes it, and the comma before it), counted without keeping them.
     * Any thread.
     *
     * @throws IllegalArgumentException when its metadata cannot be written as JSON
     */
    public long encodedSize(Vignette v) {
        return encoder.encodedSize(v);
    }

    /**
     * Writes one message as the JSON object a frame's body holds, exactly as
     * {@link #encode(Message)} does, to a generator the caller owns (a {@link FrameEncoder}'s).
     *
     * @throws IOException when the generator's target fails
     * @throws IllegalArgumentException when a vignette's metadata cannot be written as JSON
     */
    public void writeMessage(JsonGenerator g, Message message) throws IOException {
        encoder.writeMessage(g, message);
    }

    // ---------------------------------------------------------------- decoding

    /**
     * Decodes one frame body.
     *
     * @return the message, or empty when its {@code type} is one this version does not know
     *         (PROTOCOL.md: ignore it, for forward compatibility)
     * @throws ProtocolException when the bytes are not a JSON object of the protocol's shape;
     *                           the message says which field was wrong and how
     */
    public Optional<Message> decode(byte[] body, int offset, int length) {
        return decoder.decode(body, offset, length);
    }

    /** As {@link #decode(byte[], int, int)}, null for an unknown type; for {@link FrameDecoder}, once per frame. */
    Message decodeOrNull(byte[] body, int offset, int length) {
        return decoder.decodeOrNull(body, offset, length);
    }

    /** Decodes one whole frame body. */
    public Optional<Message> decode(byte[] body) {
        return decode(body, 0, body.length);
    }

    /** Decodes the way a frame not in normal form is decoded, through its tree; for tests. */
    Optional<Message> decodeCarefully(byte[] body, int offset, int length) {
        return decoder.decodeCarefully(body, offset, length);
    }

    /**
     * Reads one vignette object from JSON text, such as a line of a suite file.
     *
     * @param path what to call the object in error messages
     * @throws ProtocolException naming the bad field, or saying the text is not valid JSON
     */
    public Vignette vignette(String json, String path) {
        return lines.line(json, path);
    }

    /**
     * As {@link #vignette(String, String)}, adding to {@code unused} the name of every field of
     * the object that Panoptes does not read (a typo, or a field of another tool's format).
     */
    public Vignette vignette(String json, String path, java.util.Set<String> unused) {
        return lines.line(json, path, unused);
    }

    /**
     * Reads a JSONL stream of vignettes in one pass, for large suites.
     *
     * @return every vignette in order, or empty when any line is malformed, wrong or a duplicate:
     *         read it again line by line with {@link #vignette(String, String)} to find out which
     * @throws java.io.UncheckedIOException never; read failures also give empty
     */
    public Optional<List<Vignette>> vignettes(InputStream jsonl) {
        return vignettes(jsonl, new ArrayList<>());
    }

    /**
     * As {@link #vignettes(InputStream)}, adding each vignette's line (from 1) to
     * {@code lines}; what it added is meaningless when it returns empty.
     */
    public Optional<List<Vignette>> vignettes(InputStream jsonl, List<Integer> lines) {
        return Optional.ofNullable(this.lines.suite(jsonl, lines, null));
    }

    /**
     * As {@link #vignettes(InputStream, List)}, putting in {@code unused} each field name that
     * lines hold and Panoptes does not read, with the first line that holds it.
     */
    public Optional<List<Vignette>> vignettes(InputStream jsonl, List<Integer> lines,
                                              java.util.Map<String, Integer> unused) {
        return Optional.ofNullable(this.lines.suite(jsonl, lines, unused));
    }

    /** A byte buffer whose first four bytes can be patched with the frame length. */
    private static final class FrameBuffer extends ByteArrayOutputStream {
        FrameBuffer(int size) {
            super(size);
        }

        byte[] withLengthPrefix(int bodyBytes) {
            buf[0] = (byte) (bodyBytes >>> 24);
            buf[1] = (byte) (bodyBytes >>> 16);
            buf[2] = (byte) (bodyBytes >>> 8);
            buf[3] = (byte) bodyBytes;
            return count == buf.length ? buf : Arrays.copyOf(buf, count);
        }
    }
}
