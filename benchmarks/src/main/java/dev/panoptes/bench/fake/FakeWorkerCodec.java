package dev.panoptes.bench.fake;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The minimal fast fake worker's wire work: it reads an {@code assign} frame body with Jackson's
 * streaming parser (no tree, no model objects) and writes the {@code result} frame answering it
 * ({@code "re: <prompt>"} for each vignette) by hand, straight into a byte buffer. Frames of
 * other types are recognised and skipped. The output is exactly PROTOCOL.md's JSON, so the
 * coordinator's real decoder reads it; the unit test checks that with {@code MessageCodec}.
 *
 * <p>Made with a model name ({@link #FakeWorkerCodec(String, long)}), it answers as a real worker
 * would: each record carries the model, a finish reason, the latency and the token usage, and its
 * response is the answer to an arithmetic prompt ("What is 3 + 4?" gets "7"), else
 * {@code "re: <prompt>"}.
 *
 * <p>Not thread-safe: one per connection.
 */
public final class FakeWorkerCodec {
    private static final byte[] RESULT_HEAD = "{\"type\":\"result\",\"outcome\":{\"jobId\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RECORDS = ",\"records\":[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] VIGNETTE_ID = "{\"vignetteId\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RESPONSE = ",\"response\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "]}}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MODEL = ",\"model\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FINISH_LATENCY = ",\"finishReason\":\"stop\",\"latencyMs\":"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = ",\"usage\":{\"promptTokens\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] COMPLETION = ",\"completionTokens\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private final JsonFactory json = new JsonFactory();
    private final List<String> vignetteIds = new ArrayList<>();
    private final List<String> prompts = new ArrayList<>();
    private String type;
    private String jobId;
    // Held once, so that reading a frame allocates no reader.
    private final FieldReader frameField = this::readFrameField;
    private final FieldReader jobField = this::readJobField;
    private final FieldReader specField = this::readSpecField;

    private byte[] out = new byte[64 * 1024];
    private int outLength;
    /** The model named in each record, or null for the bare echo records. */
    private final String model;
    private final long latencyMs;

    /** Answers with bare records: {@code "re: <prompt>"}, nothing else. */
    public FakeWorkerCodec() {
        this(null, 0);
    }

    /**
     * Answers with full records, as a real worker's: model, finish reason, {@code latencyMs} and
     * usage (about four characters a token), the response answering arithmetic prompts.
     */
    public FakeWorkerCodec(String model, long latencyMs) {
        this.model = model;
        this.latencyMs = latencyMs;
    }

    /**
     * Reads one frame body and, when it is an {@code assign}, appends the framed {@code result}
     * answering it to the output.
     *
     * @return true when the frame was an assign
     * @throws IOException when the body is not the JSON it should be
     */
    public boolean onFrame(byte[] body, int offset, int length) throws IOException {
        type = null;
        jobId = null;
        vignetteIds.clear();
        prompts.clear();
        try (JsonParser p = json.createParser(body, offset, length)) {
            p.nextToken();
            readObject(p, frameField);
        }
        if (!"assign".equals(type)) {
            return false;
        }
        if (jobId == null || vignetteIds.isEmpty()) {
            throw new IOException("assign frame without job id or vignettes");
        }
        appendResult();
        return true;
    }

    /** The vignettes of the last assign read: the records of the answer written for it. */
    public int lastRecords() {
        return vignetteIds.size();
    }

    /** The type of the last frame read. */
    public String lastType() {
        return type;
    }

    /** One field of an object, the parser on its value; false to have the value skipped. */
    @FunctionalInterface
    private interface FieldReader {
        boolean read(String field, JsonParser p) throws IOException;
    }

    /** Reads the object the parser stands on, handing each field to {@code reader}. */
    private static void readObject(JsonParser p, FieldReader reader) throws IOException {
        expect(p.currentToken(), JsonToken.START_OBJECT);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (!reader.read(field, p)) {
                p.skipChildren();
            }
        }
    }

    private boolean readFrameField(String field, JsonParser p) throws IOException {
        if (field.equals("type")) {
            type = p.getText();
        } else if (field.equals("job")) {
            readObject(p, jobField);
        } else {
            return false;
        }
        return true;
    }

    private boolean readJobField(String field, JsonParser p) throws IOException {
        if (field.equals("id")) {
            jobId = p.getText();
        } else if (field.equals("spec")) {
            readObject(p, specField);
        } else {
            return false;
        }
        return true;
    }

    private boolean readSpecField(String field, JsonParser p) throws IOException {
        if (!field.equals("vignettes")) {
            return false;
        }
        expect(p.currentToken(), JsonToken.START_ARRAY);
        while (p.nextToken() == JsonToken.START_OBJECT) {
            String id = null;
            String prompt = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                p.nextToken();
                if (f.equals("id")) {
                    id = p.getText();
                } else if (f.equals("prompt")) {
                    prompt = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            if (id == null || prompt == null) {
                throw new IOException("vignette without id or prompt");
            }
            vignetteIds.add(id);
            prompts.add(prompt);
        }
        return true;
    }

    private static void expect(JsonToken actual, JsonToken expected) throws IOException {
        if (actual != expected) {
            throw new IOException("expected " + expected + ", got " + actual);
        }
    }

    private void appendResult() {
        int frameAt = outLength;
        ensure(4);
        outLength += 4;
        append(RESULT_HEAD);
        appendString(jobId, null);
        append(RECORDS);
        for (int i = 0; i < vignetteIds.size(); i++) {
            if (i > 0) {
                append((byte) ',');
            }
            append(VIGNETTE_ID);
            appendString(vignetteIds.get(i), null);
            append(RESPONSE);
            if (model == null) {
                appendString(prompts.get(i), "re: ");
            } else {
                String prompt = prompts.get(i);
                String answer = answer(prompt);
                appendString(answer, null);
                append(MODEL);
                appendString(model, null);
                append(FINISH_LATENCY);
                appendLong(latencyMs);
                append(USAGE);
                appendLong(prompt.length() / 4 + 1);
                append(COMPLETION);
                appendLong(answer.length() / 4 + 1);
                append((byte) '}');
            }
            append((byte) '}');
        }
        append(END);
        int body = outLength - frameAt - 4;
        out[frameAt] = (byte) (body >>> 24);
        out[frameAt + 1] = (byte) (body >>> 16);
        out[frameAt + 2] = (byte) (body >>> 8);
        out[frameAt + 3] = (byte) body;
    }

    /**
     * The answer to "What is A op B?" (op one of + - *), as the product's stub model gives it;
     * {@code "re: <prompt>"} for any other prompt.
     */
    static String answer(String prompt) {
        if (prompt.startsWith("What is ") && prompt.endsWith("?")) {
            String[] parts = prompt.substring(8, prompt.length() - 1).split(" ");
            if (parts.length == 3 && parts[1].length() == 1) {
                try {
                    long a = Long.parseLong(parts[0]);
                    long b = Long.parseLong(parts[2]);
                    switch (parts[1].charAt(0)) {
                        case '+' -> {
                            return Long.toString(a + b);
                        }
                        case '-' -> {
                            return Long.toString(a - b);
                        }
                        case '*' -> {
                            return Long.toString(a * b);
                        }
                        default -> {
                        }
                    }
                } catch (NumberFormatException notArithmetic) {
                    // falls through to the echo
                }
            }
        }
        return "re: " + prompt;
    }

    private void appendLong(long value) {
        String digits = Long.toString(value);
        ensure(digits.length());
        for (int i = 0; i < digits.length(); i++) {
            out[outLength++] = (byte) digits.charAt(i);
        }
    }

    /** Appends a whole frame encoded elsewhere (register, heartbeat). */
    public void appendFrame(byte[] frame) {
        append(frame);
    }

    /** The framed answers appended since the last {@link #clearOutput()}: {@code out()[0, outLength())}. */
    public byte[] out() {
        return out;
    }

    public int outLength() {
        return outLength;
    }

    public void clearOutput() {
        outLength = 0;
    }

    /** Appends {@code prefix + s} as a JSON string (quoted, escaped, UTF-8). */
    private void appendString(String s, String prefix) {
        append((byte) '"');
        if (prefix != null) {
            appendEscaped(prefix);
        }
        appendEscaped(s);
        append((byte) '"');
    }

    private void appendEscaped(String s) {
        ensure(s.length() * 6);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out[outLength++] = '\\';
                out[outLength++] = (byte) c;
            } else if (c < 0x20) {
                out[outLength++] = '\\';
                out[outLength++] = 'u';
                out[outLength++] = '0';
                out[outLength++] = '0';
                out[outLength++] = HEX[c >> 4];
                out[outLength++] = HEX[c & 0xf];
            } else if (c < 0x80) {
                out[outLength++] = (byte) c;
            } else {
                int cp = s.codePointAt(i);
                if (Character.charCount(cp) == 2) {
                    i++;
                    appendUtf8(cp);
                } else if (Character.isSurrogate(c)) {
                    out[outLength++] = '?'; // a lone surrogate has no UTF-8 form
                } else {
                    appendUtf8(cp);
                }
            }
        }
    }

    /** UTF-8 of one code point above ASCII; room was ensured by the caller (6 bytes per char). */
    private void appendUtf8(int cp) {
        if (cp < 0x800) {
            out[outLength++] = (byte) (0xc0 | (cp >> 6));
        } else if (cp < 0x10000) {
            out[outLength++] = (byte) (0xe0 | (cp >> 12));
            out[outLength++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        } else {
            out[outLength++] = (byte) (0xf0 | (cp >> 18));
            out[outLength++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
            out[outLength++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        }
        out[outLength++] = (byte) (0x80 | (cp & 0x3f));
    }

    private void append(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, out, outLength, bytes.length);
        outLength += bytes.length;
    }

    private void append(byte b) {
        ensure(1);
        out[outLength++] = b;
    }

    private void ensure(int extra) {
        if (outLength + extra > out.length) {
            out = Arrays.copyOf(out, Math.max(out.length * 2, outLength + extra));
        }
    }
}
