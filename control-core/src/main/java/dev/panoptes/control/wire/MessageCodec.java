package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Maps {@link Message}s to and from the JSON of PROTOCOL.md, and frames them.
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
    private final JsonFactory factory;
    private final int maxFrameBytes;
    private final FastPath fastPath;

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
        this.factory = mapper.getFactory();
        this.fastPath = new FastPath(mapper);
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
        writeJson(message, out);
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
        writeJson(message, out);
        int bodyBytes = out.size() - LENGTH_PREFIX_BYTES;
        if (bodyBytes > maxFrameBytes) {
            throw new ProtocolException("cannot send a " + message.type() + " frame of " + bodyBytes
                    + " bytes: the frame limit is " + maxFrameBytes + " bytes");
        }
        return out.withLengthPrefix(bodyBytes);
    }

    /**
     * The bytes a vignette takes inside a job's {@code assign} frame (its JSON object, as
     * {@link #writeVignette} writes it, and the comma before it), counted without keeping them.
     * Any thread.
     *
     * @throws IllegalArgumentException when its metadata cannot be written as JSON
     */
    public long encodedSize(Vignette v) {
        CountingStream counter = new CountingStream();
        try (JsonGenerator g = factory.createGenerator(counter, JsonEncoding.UTF8)) {
            writeVignette(g, v);
        } catch (IOException e) {
            throw new UncheckedIOException("could not encode vignette '" + v.id() + "'", e);
        }
        return counter.count + 1;
    }

    /** Counts what is written to it, and keeps nothing. */
    private static final class CountingStream extends OutputStream {
        long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }

    private void writeJson(Message message, OutputStream out) {
        try (JsonGenerator g = factory.createGenerator(out, JsonEncoding.UTF8)) {
            writeMessage(g, message);
        } catch (IOException e) {
            // Only an in-memory stream is ever written to.
            throw new UncheckedIOException("could not encode a " + message.type() + " message", e);
        }
    }

    /**
     * Writes one message as the JSON object a frame's body holds, exactly as
     * {@link #encode(Message)} does, to a generator the caller owns (a {@link FrameEncoder}'s).
     *
     * @throws IOException when the generator's target fails
     * @throws IllegalArgumentException when a vignette's metadata cannot be written as JSON
     */
    public void writeMessage(JsonGenerator g, Message message) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", message.type());
        writeFields(g, message);
        g.writeEndObject();
    }

    // Java 17 has no pattern switch; the chain below covers every permitted subtype.
    private void writeFields(JsonGenerator g, Message message) throws IOException {
        if (message instanceof Message.Register r) {
            g.writeStringField("workerId", r.workerId());
            g.writeNumberField("capacity", r.capacity());
            g.writeNumberField("protocol", r.protocol());
            if (r.token() != null) {
                g.writeStringField("token", r.token());
            }
            if (!r.labels().isEmpty()) {
                g.writeObjectFieldStart("labels");
                for (Map.Entry<String, String> e : r.labels().entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            if (!r.models().isEmpty()) {
                g.writeArrayFieldStart("models");
                for (String m : r.models()) {
                    g.writeString(m);
                }
                g.writeEndArray();
            }
        } else if (message instanceof Message.Heartbeat h) {
            if (h.workerId() != null) {
                g.writeStringField("workerId", h.workerId());
            }
        } else if (message instanceof Message.Result r) {
            g.writeFieldName("outcome");
            writeOutcome(g, r.outcome());
        } else if (message instanceof Message.Failed f) {
            g.writeStringField("jobId", f.jobId().value());
            g.writeStringField("error", f.error());
            g.writeBooleanField("retryable", f.retryable());
            if (f.scope() != null) {
                g.writeStringField("scope", f.scope().wireName());
            }
        } else if (message instanceof Message.Registered r) {
            g.writeNumberField("heartbeatMs", r.heartbeatMs());
            if (r.maxFrameBytes() != null) {
                g.writeNumberField("maxFrameBytes", r.maxFrameBytes());
            }
        } else if (message instanceof Message.Rejected r) {
            g.writeStringField("reason", r.reason());
            if (r.retryable()) {
                g.writeBooleanField("retryable", true);
            }
        } else if (message instanceof Message.Cancel c) {
            g.writeStringField("jobId", c.jobId().value());
            if (c.reason() != null) {
                g.writeStringField("reason", c.reason());
            }
        } else if (message instanceof Message.Assign a) {
            g.writeFieldName("job");
            writeJob(g, a.job());
        } else if (message instanceof Message.Throttled t) {
            g.writeNumberField("count", t.count());
        } else if (!(message instanceof Message.Drain)) {
            throw new IllegalStateException("no encoding for " + message.getClass());
        }
    }

    /** Writes a Job object as PROTOCOL.md's payload section writes it. */
    public void writeJob(JsonGenerator g, Job job) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", job.id().value());
        g.writeFieldName("spec");
        EvalSpec spec = job.spec();
        g.writeStartObject();
        g.writeStringField("name", spec.name());
        g.writeArrayFieldStart("vignettes");
        for (Vignette v : spec.vignettes()) {
            writeVignette(g, v);
        }
        g.writeEndArray();
        SpecParams p = spec.params();
        if (!p.isEmpty()) {
            g.writeObjectFieldStart("params");
            if (p.system() != null) {
                g.writeStringField("system", p.system());
            }
            if (p.temperature() != null) {
                g.writeNumberField("temperature", p.temperature());
            }
            if (p.maxTokens() != null) {
                g.writeNumberField("maxTokens", p.maxTokens());
            }
            if (p.seed() != null) {
                g.writeNumberField("seed", p.seed());
            }
            if (p.model() != null) {
                g.writeStringField("model", p.model());
            }
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    /** Writes a Vignette object. */
    public void writeVignette(JsonGenerator g, Vignette v) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", v.id());
        if (v.isChat()) {
            g.writeArrayFieldStart("messages");
            for (ChatMessage m : v.messages()) {
                g.writeStartObject();
                g.writeStringField("role", m.role());
                g.writeStringField("content", m.content());
                g.writeEndObject();
            }
            g.writeEndArray();
        } else {
            g.writeStringField("prompt", v.prompt());
        }
        if (v.scorer() != null) {
            g.writeStringField("scorer", v.scorer());
        }
        if (v.expected() != null) {
            g.writeStringField("expected", v.expected());
        }
        if (!v.metadata().isEmpty()) {
            g.writeFieldName("metadata");
            try {
                mapper.writeValue(g, v.metadata());
            } catch (JsonMappingException e) {
                throw new IllegalArgumentException("vignette '" + v.id() + "' has a metadata field that cannot be"
                        + " written as JSON, at " + metadataPath(e) + ": " + e.getOriginalMessage()
                        + "; give metadata only strings, numbers, booleans, lists and maps", e);
            }
        }
        g.writeEndObject();
    }

    /** "metadata.a.b[2]": where in a vignette's metadata Jackson gave up. */
    private static String metadataPath(JsonMappingException e) {
        StringBuilder path = new StringBuilder("metadata");
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                path.append('.').append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                path.append('[').append(r.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    /** Writes a JobOutcome object. */
    public void writeOutcome(JsonGenerator g, JobOutcome outcome) throws IOException {
        g.writeStartObject();
        g.writeStringField("jobId", outcome.jobId().value());
        g.writeArrayFieldStart("records");
        for (ResponseRecord r : outcome.records()) {
            writeRecord(g, r);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Writes a ResponseRecord object. */
    public void writeRecord(JsonGenerator g, ResponseRecord r) throws IOException {
        g.writeStartObject();
        g.writeStringField("vignetteId", r.vignetteId());
        g.writeStringField("response", r.response());
        if (r.model() != null) {
            g.writeStringField("model", r.model());
        }
        if (r.finishReason() != null) {
            g.writeStringField("finishReason", r.finishReason());
        }
        if (r.latencyMs() != null) {
            g.writeNumberField("latencyMs", r.latencyMs());
        }
        if (r.usage() != null) {
            g.writeObjectFieldStart("usage");
            g.writeNumberField("promptTokens", r.usage().promptTokens());
            g.writeNumberField("completionTokens", r.usage().completionTokens());
            g.writeEndObject();
        }
        if (r.error() != null) {
            g.writeStringField("error", r.error());
        }
        g.writeEndObject();
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
        Message fast = fastPath.decode(body, offset, length);
        if (fast != null) {
            return Optional.of(fast);
        }
        return decodeCarefully(body, offset, length);
    }

    /** Decodes through a JSON tree, which checks everything and names what is wrong. */
    Optional<Message> decodeCarefully(byte[] body, int offset, int length) {
        JsonNode root;
        try {
            root = mapper.readTree(body, offset, length);
        } catch (JsonProcessingException e) {
            throw new ProtocolException("frame of " + length + " bytes is not valid JSON: "
                    + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ProtocolException("frame of " + length + " bytes could not be read: " + e.getMessage(), e);
        }
        return decode(root);
    }

    /** Decodes one whole frame body. */
    public Optional<Message> decode(byte[] body) {
        return decode(body, 0, body.length);
    }

    /** Decodes a message already parsed into a tree; see {@link #decode(byte[], int, int)}. */
    public Optional<Message> decode(JsonNode root) {
        if (root == null || !root.isObject()) {
            throw new ProtocolException("frame must hold one JSON object, got "
                    + (root == null ? "nothing" : describe(root)));
        }
        JsonNode typeNode = root.get("type");
        if (typeNode == null || typeNode.isNull()) {
            throw new ProtocolException("frame has no \"type\" field");
        }
        if (!typeNode.isTextual()) {
            throw new ProtocolException("field \"type\" must be a string, got " + describe(typeNode));
        }
        String type = typeNode.textValue();
        Fields f = new Fields(root, type);
        try {
            return Optional.ofNullable(switch (type) {
                case "register" -> new Message.Register(
                        f.string("workerId"), clampToInt(f.integer("capacity")), clampToInt(f.integer("protocol")),
                        f.optString("token"), f.optStringMap("labels"), f.optStrings("models"));
                case "heartbeat" -> new Message.Heartbeat(f.optString("workerId"));
                case "result" -> new Message.Result(outcome(f.object("outcome")));
                case "failed" -> new Message.Failed(new JobId(f.string("jobId")), f.string("error"),
                        f.bool("retryable"), FailureScope.fromWire(f.optString("scope")).orElse(null));
                case "drain" -> new Message.Drain();
                case "throttled" -> new Message.Throttled(Math.max(1, f.integer("count")));
                case "registered" -> new Message.Registered(f.integer("heartbeatMs"), f.optInteger("maxFrameBytes"));
                case "rejected" -> new Message.Rejected(f.string("reason"), f.optBool("retryable", false));
                case "cancel" -> new Message.Cancel(new JobId(f.string("jobId")), f.optString("reason"));
                case "assign" -> new Message.Assign(job(f.object("job")));
                default -> null;
            });
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ProtocolException("invalid " + type + " frame: " + e.getMessage(), e);
        }
    }

    /** Reads a Job object. @throws ProtocolException naming the bad field */
    public Job job(Fields f) {
        Fields spec = f.object("spec");
        Fields params = spec.optObject("params");
        List<Vignette> vignettes = new ArrayList<>();
        for (Fields v : spec.objects("vignettes")) {
            vignettes.add(vignette(v));
        }
        SpecParams specParams = params == null ? SpecParams.NONE : new SpecParams(
                params.optString("system"), params.optNumber("temperature"),
                params.optInteger("maxTokens") == null ? null : clampToInt(params.optInteger("maxTokens")),
                params.optInteger("seed"), params.optString("model"));
        return new Job(new JobId(f.string("id")), new EvalSpec(spec.string("name"), vignettes, specParams));
    }

    /**
     * Reads one vignette object from JSON text, such as a line of a suite file.
     *
     * @param path what to call the object in error messages
     * @throws ProtocolException naming the bad field, or saying the text is not valid JSON
     */
    public Vignette vignette(String json, String path) {
        Vignette fast = fastPath.decodeVignette(json);
        if (fast != null) {
            return fast;
        }
        JsonNode node;
        try {
            node = mapper.readTree(json);
        } catch (JsonProcessingException e) {
            throw new ProtocolException("not valid JSON: " + JsonErrors.plain(e), e);
        }
        try {
            return vignette(fields(node, path));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ProtocolException(e.getMessage(), e);
        }
    }

    /**
     * Reads a JSONL stream of vignettes in one pass, for large suites.
     *
     * @return every vignette in order, or empty when any line is malformed, wrong or a duplicate:
     *         read it again line by line with {@link #vignette(String, String)} to find out which
     * @throws java.io.UncheckedIOException never; read failures also give empty
     */
    public Optional<List<Vignette>> vignettes(java.io.InputStream jsonl) {
        return vignettes(jsonl, new ArrayList<>());
    }

    /**
     * As {@link #vignettes(java.io.InputStream)}, adding each vignette's line (from 1) to
     * {@code lines}; what it added is meaningless when it returns empty.
     */
    public Optional<List<Vignette>> vignettes(java.io.InputStream jsonl, List<Integer> lines) {
        return Optional.ofNullable(fastPath.decodeSuite(jsonl, lines));
    }

    /** Reads a Vignette object. @throws ProtocolException naming the bad field */
    public Vignette vignette(Fields v) {
        List<ChatMessage> messages = new ArrayList<>();
        for (Fields m : v.optObjects("messages")) {
            messages.add(new ChatMessage(m.string("role"), m.string("content")));
        }
        String prompt = messages.isEmpty() ? v.string("prompt") : v.optString("prompt");
        return new Vignette(v.string("id"), prompt, v.optString("expected"), v.optObjectMap("metadata"), messages,
                v.optString("scorer"));
    }

    /** Reads a JobOutcome object. @throws ProtocolException naming the bad field */
    public JobOutcome outcome(Fields f) {
        List<ResponseRecord> records = new ArrayList<>();
        for (Fields r : f.objects("records")) {
            Fields usage = r.optObject("usage");
            records.add(new ResponseRecord(r.string("vignetteId"), r.string("response"), r.optString("model"),
                    r.optString("finishReason"), r.optInteger("latencyMs"),
                    usage == null ? null : new Usage(usage.integer("promptTokens"), usage.integer("completionTokens")),
                    r.optString("error")));
        }
        return new JobOutcome(new JobId(f.string("jobId")), records);
    }

    /** Views a parsed JSON object as the named payload, for strict, path-naming field access. */
    public Fields fields(JsonNode object, String path) {
        if (object == null || !object.isObject()) {
            throw new ProtocolException(path + " must be a JSON object, got "
                    + (object == null ? "nothing" : describe(object)));
        }
        return new Fields(object, path);
    }

    private static int clampToInt(long value) {
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
    }

    private static String describe(JsonNode node) {
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case STRING -> "a string";
            case NUMBER -> node.isIntegralNumber() ? "an integer" : "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /**
     * Strict typed access to one JSON object's fields. Every failure is a
     * {@link ProtocolException} that names the full path of the field ("assign.job.spec.name").
     */
    public final class Fields {
        private final JsonNode node;
        private final String path;

        Fields(JsonNode node, String path) {
            this.node = node;
            this.path = path;
        }

        private JsonNode required(String name) {
            JsonNode v = node.get(name);
            if (v == null || v.isNull()) {
                throw new ProtocolException(path + " has no \"" + name + "\" field");
            }
            return v;
        }

        private JsonNode optional(String name) {
            JsonNode v = node.get(name);
            return v == null || v.isNull() ? null : v;
        }

        private ProtocolException wrongType(String name, String expected, JsonNode actual) {
            return new ProtocolException(path + "." + name + " must be " + expected + ", got " + describe(actual));
        }

        /** A required string. */
        public String string(String name) {
            JsonNode v = required(name);
            if (!v.isTextual()) {
                throw wrongType(name, "a string", v);
            }
            return v.textValue();
        }

        /** An optional string, or null. */
        public String optString(String name) {
            JsonNode v = optional(name);
            if (v == null) {
                return null;
            }
            if (!v.isTextual()) {
                throw wrongType(name, "a string", v);
            }
            return v.textValue();
        }

        /** A required integer; integers beyond a long are clamped to its range. */
        public long integer(String name) {
            return toLong(name, required(name));
        }

        /** An optional integer, or null. */
        public Long optInteger(String name) {
            JsonNode v = optional(name);
            return v == null ? null : toLong(name, v);
        }

        private long toLong(String name, JsonNode v) {
            if (!v.isIntegralNumber()) {
                throw wrongType(name, "an integer", v);
            }
            if (v.canConvertToLong()) {
                return v.longValue();
            }
            return v.bigIntegerValue().signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }

        /** An optional number, or null. */
        public Double optNumber(String name) {
            JsonNode v = optional(name);
            if (v == null) {
                return null;
            }
            if (!v.isNumber()) {
                throw wrongType(name, "a number", v);
            }
            return v.doubleValue();
        }

        /** A required boolean. */
        public boolean bool(String name) {
            JsonNode v = required(name);
            if (!v.isBoolean()) {
                throw wrongType(name, "a boolean", v);
            }
            return v.booleanValue();
        }

        /** An optional boolean, or {@code absent} when the field is missing or null. */
        public boolean optBool(String name, boolean absent) {
            JsonNode v = optional(name);
            if (v == null) {
                return absent;
            }
            if (!v.isBoolean()) {
                throw wrongType(name, "a boolean", v);
            }
            return v.booleanValue();
        }

        /** A required nested object. */
        public Fields object(String name) {
            JsonNode v = required(name);
            if (!v.isObject()) {
                throw wrongType(name, "an object", v);
            }
            return new Fields(v, path + "." + name);
        }

        /** An optional nested object, or null. */
        public Fields optObject(String name) {
            JsonNode v = optional(name);
            if (v == null) {
                return null;
            }
            if (!v.isObject()) {
                throw wrongType(name, "an object", v);
            }
            return new Fields(v, path + "." + name);
        }

        /** A required array of objects. */
        public List<Fields> objects(String name) {
            JsonNode v = required(name);
            if (!v.isArray()) {
                throw wrongType(name, "an array", v);
            }
            List<Fields> items = new ArrayList<>(v.size());
            for (int i = 0; i < v.size(); i++) {
                JsonNode item = v.get(i);
                String itemPath = name + "[" + i + "]";
                if (!item.isObject()) {
                    throw wrongType(itemPath, "an object", item);
                }
                items.add(new Fields(item, path + "." + itemPath));
            }
            return items;
        }

        /** An optional array of objects; empty when absent. */
        public List<Fields> optObjects(String name) {
            return optional(name) == null ? List.of() : objects(name);
        }

        /** An optional array of strings; empty when absent. */
        public List<String> optStrings(String name) {
            JsonNode v = optional(name);
            if (v == null) {
                return List.of();
            }
            if (!v.isArray()) {
                throw wrongType(name, "an array of strings", v);
            }
            List<String> out = new ArrayList<>(v.size());
            for (int i = 0; i < v.size(); i++) {
                JsonNode item = v.get(i);
                if (!item.isTextual()) {
                    throw wrongType(name + "[" + i + "]", "a string", item);
                }
                out.add(item.textValue());
            }
            return out;
        }

        /** An optional object of string values, or an empty map. */
        public Map<String, String> optStringMap(String name) {
            Fields obj = optObject(name);
            if (obj == null) {
                return Map.of();
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (Iterator<String> it = obj.node.fieldNames(); it.hasNext(); ) {
                String key = it.next();
                out.put(key, obj.string(key));
            }
            return out;
        }

        /** An optional object of any JSON values, as plain Java maps, lists and scalars. */
        @SuppressWarnings("unchecked")
        public Map<String, Object> optObjectMap(String name) {
            Fields obj = optObject(name);
            return obj == null ? Map.of() : mapper.convertValue(obj.node, LinkedHashMap.class);
        }
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
