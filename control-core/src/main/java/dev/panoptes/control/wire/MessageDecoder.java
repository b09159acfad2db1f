package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Usage;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.panoptes.control.wire.FieldReader.clampToInt;
import static dev.panoptes.control.wire.FieldReader.integer;
import static dev.panoptes.control.wire.FieldReader.require;
import static dev.panoptes.control.wire.FieldReader.skip;
import static dev.panoptes.control.wire.FieldReader.text;

/**
 * Decodes frame bodies into {@link Message}s from Jackson's token stream: the one place that
 * knows each message's fields when reading (the payloads' are in {@link PayloadReader}).
 *
 * <p>A valid frame whose {@code type} is its first field, and its only one, is read in a single
 * pass over its bytes, without a tree: that is every frame this codec writes, and the
 * coordinator decodes one {@code result} per job. Anything else ({@code type} elsewhere or
 * twice, invalid JSON, a wrong field) is read again by the same field readers from the frame's
 * tree, with {@code type} moved first and a repeated field's last value kept, as in the single
 * pass; that second reading gives the precise error ("frame of 12 bytes is not valid JSON",
 * "register.capacity must be an integer, got a string"). When a frame has several faults, the
 * first in the document is the one named.
 *
 * <p>The single pass reads with this thread's {@link ReusedParser}: one parser per thread for
 * the frames it decodes, one after the other, instead of one per frame.
 *
 * <p>Thread-safe: beyond Jackson's immutable factory and readers, its only state is each
 * thread's own parser.
 */
final class MessageDecoder {
    private final ObjectMapper mapper;
    private final JsonFactory factory;
    private final PayloadReader payloads;
    /** Each decoding thread's parser, reused across its frames; owned by that thread. */
    private final ThreadLocal<ReusedParser> parsers;

    MessageDecoder(ObjectMapper mapper) {
        this.mapper = mapper;
        this.factory = mapper.getFactory();
        this.parsers = ThreadLocal.withInitial(() -> new ReusedParser(factory));
        this.payloads = new PayloadReader(mapper);
    }

    PayloadReader payloads() {
        return payloads;
    }

    /**
     * Decodes one frame body.
     *
     * @return the message, or empty when its {@code type} is one this version does not know
     * @throws ProtocolException when the bytes are not a JSON object of the protocol's shape
     */
    Optional<Message> decode(byte[] body, int offset, int length) {
        return Optional.ofNullable(decodeOrNull(body, offset, length));
    }

    /** As {@link #decode}, null for a type this version does not know (no {@link Optional} per frame). */
    Message decodeOrNull(byte[] body, int offset, int length) {
        try {
            return readInOnePass(body, offset, length);
        } catch (IOException | RuntimeException e) {
            // Not in normal form, or wrong: the careful reading says which.
            return decodeCarefully(body, offset, length).orElse(null);
        }
    }

    /**
     * Reads a frame in normal form in one pass over its bytes.
     *
     * @return the message, or null for a type this version does not know
     * @throws FieldReader.Fault when the frame is not in normal form, or its fields are wrong
     * @throws IOException when it is not valid JSON
     * @throws IllegalArgumentException when a message's or payload's constructor refuses a value
     */
    Message readInOnePass(byte[] body, int offset, int length) throws IOException {
        ReusedParser reused = parsers.get();
        JsonParser p = reused.open(body, offset, length);
        if (p == null) {
            try (JsonParser own = factory.createParser(body, offset, length)) {
                Message m = readObject(own);
                if (own.nextToken() != null) {
                    throw new FieldReader.Fault(" is followed by more JSON");
                }
                return m;
            }
        }
        boolean read = false;
        try {
            Message m = readObject(p);
            read = true;
            if (!reused.finish()) {
                throw new FieldReader.Fault(" is followed by more JSON");
            }
            return m;
        } finally {
            if (!read) {
                // Mid-object after a fault: the parser's state is of no use for the next frame.
                reused.discard();
            }
        }
    }

    /** Reads one frame's object, {@code type} first, leaving the parser on its end. */
    private Message readObject(JsonParser p) throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME
                || !"type".equals(p.currentName()) || p.nextToken() != JsonToken.VALUE_STRING) {
            throw new FieldReader.Fault(" does not start with its \"type\"");
        }
        return fields(p, p.getText());
    }

    /** Decodes through the frame's tree, which checks the JSON first and accepts any field order. */
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
        try (JsonParser p = mapper.treeAsTokens(typeFirst((ObjectNode) root))) {
            p.nextToken();
            p.nextToken();
            p.nextToken();
            return Optional.ofNullable(fields(p, type));
        } catch (FieldReader.Fault e) {
            throw new ProtocolException(type + e.getMessage(), e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ProtocolException("invalid " + type + " frame: " + e.getMessage(), e);
        } catch (IOException e) {
            // A tree is in memory: nothing to fail but a bug.
            throw new ProtocolException("frame of " + length + " bytes could not be read: " + e.getMessage(), e);
        }
    }

    private static ObjectNode typeFirst(ObjectNode root) {
        ObjectNode normal = root.objectNode();
        normal.set("type", root.get("type"));
        for (Map.Entry<String, JsonNode> field : root.properties()) {
            if (!"type".equals(field.getKey())) {
                normal.set(field.getKey(), field.getValue());
            }
        }
        return normal;
    }

    /**
     * Reads the fields after {@code type} up to the frame object's end.
     *
     * @return the message, or null for a type this version does not know
     */
    private Message fields(JsonParser p, String type) throws IOException {
        return switch (type) {
            case "register" -> register(p);
            case "heartbeat" -> heartbeat(p);
            case "result" -> result(p);
            case "failed" -> failed(p);
            case "drain" -> drain(p);
            case "throttled" -> throttled(p);
            case "registered" -> registered(p);
            case "rejected" -> rejected(p);
            case "cancel" -> cancel(p);
            case "assign" -> assign(p);
            default -> unknown(p);
        };
    }

    /**
     * The name of the frame's next field, or null at the frame's end. A second {@code type}
     * would change what the frame is (in a tree the last one wins): a fault, so that the frame
     * is read again from its tree.
     */
    private static String nextField(JsonParser p) throws IOException {
        if (p.nextToken() != JsonToken.FIELD_NAME) {
            return null;
        }
        String name = p.currentName();
        if ("type".equals(name)) {
            throw new FieldReader.Fault(" has a second \"type\" field");
        }
        return name;
    }

    private static Message register(JsonParser p) throws IOException {
        String workerId = null;
        Long capacity = null;
        Long protocol = null;
        String token = null;
        Map<String, String> labels = Map.of();
        List<String> models = List.of();
        for (String name; (name = nextField(p)) != null; ) {
            switch (name) {
                case "workerId" -> workerId = text(p);
                case "capacity" -> capacity = integer(p);
                case "protocol" -> protocol = integer(p);
                case "token" -> token = text(p);
                case "labels" -> labels = FieldReader.object(p) ? labels(p) : Map.of();
                case "models" -> models = FieldReader.array(p, "an array of strings") ? models(p) : List.of();
                default -> skip(p);
            }
        }
        require(p, workerId, "workerId");
        return new Message.Register(workerId, clampToInt(require(p, capacity, "capacity")),
                clampToInt(require(p, protocol, "protocol")), token, labels, models);
    }

    /** An object of string values, every one required. */
    private static Map<String, String> labels(JsonParser p) throws IOException {
        Map<String, String> labels = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String value = text(p);
            if (value == null) {
                throw FieldReader.missingEntry(p);
            }
            labels.put(p.currentName(), value);
        }
        return labels;
    }

    private static List<String> models(JsonParser p) throws IOException {
        List<String> models = new ArrayList<>();
        for (String m; (m = FieldReader.nextText(p)) != null; ) {
            models.add(m);
        }
        return models;
    }

    private static Message heartbeat(JsonParser p) throws IOException {
        String workerId = null;
        for (String name; (name = nextField(p)) != null; ) {
            if ("workerId".equals(name)) {
                workerId = text(p);
            } else {
                skip(p);
            }
        }
        return new Message.Heartbeat(workerId);
    }

    private Message result(JsonParser p) throws IOException {
        JobOutcome outcome = null;
        for (String name; (name = nextField(p)) != null; ) {
            if ("outcome".equals(name)) {
                outcome = FieldReader.object(p) ? payloads.outcome(p) : null;
            } else {
                skip(p);
            }
        }
        return new Message.Result(require(p, outcome, "outcome"));
    }

    private static Message failed(JsonParser p) throws IOException {
        String jobId = null;
        String error = null;
        Boolean retryable = null;
        String scope = null;
        Usage spent = null;
        for (String name; (name = nextField(p)) != null; ) {
            switch (name) {
                case "jobId" -> jobId = text(p);
                case "error" -> error = text(p);
                case "retryable" -> retryable = FieldReader.bool(p);
                case "scope" -> scope = text(p);
                case "spent" -> spent = FieldReader.object(p) ? PayloadReader.usage(p) : null;
                default -> skip(p);
            }
        }
        require(p, jobId, "jobId");
        require(p, error, "error");
        return new Message.Failed(new JobId(jobId), error, require(p, retryable, "retryable"),
                FailureScope.fromWire(scope).orElse(null), spent);
    }

    private static Message drain(JsonParser p) throws IOException {
        unknown(p);
        return new Message.Drain();
    }

    private static Message throttled(JsonParser p) throws IOException {
        Long count = null;
        for (String name; (name = nextField(p)) != null; ) {
            if ("count".equals(name)) {
                count = integer(p);
            } else {
                skip(p);
            }
        }
        return new Message.Throttled(Math.max(1, require(p, count, "count")));
    }

    private static Message registered(JsonParser p) throws IOException {
        Long heartbeatMs = null;
        Long maxFrameBytes = null;
        for (String name; (name = nextField(p)) != null; ) {
            switch (name) {
                case "heartbeatMs" -> heartbeatMs = integer(p);
                case "maxFrameBytes" -> maxFrameBytes = integer(p);
                default -> skip(p);
            }
        }
        return new Message.Registered(require(p, heartbeatMs, "heartbeatMs"), maxFrameBytes);
    }

    private static Message rejected(JsonParser p) throws IOException {
        String reason = null;
        Boolean retryable = null;
        for (String name; (name = nextField(p)) != null; ) {
            switch (name) {
                case "reason" -> reason = text(p);
                case "retryable" -> retryable = FieldReader.bool(p);
                default -> skip(p);
            }
        }
        return new Message.Rejected(require(p, reason, "reason"), retryable != null && retryable);
    }

    private static Message cancel(JsonParser p) throws IOException {
        String jobId = null;
        String reason = null;
        for (String name; (name = nextField(p)) != null; ) {
            switch (name) {
                case "jobId" -> jobId = text(p);
                case "reason" -> reason = text(p);
                default -> skip(p);
            }
        }
        return new Message.Cancel(new JobId(require(p, jobId, "jobId")), reason);
    }

    private Message assign(JsonParser p) throws IOException {
        Job job = null;
        for (String name; (name = nextField(p)) != null; ) {
            if ("job".equals(name)) {
                job = FieldReader.object(p) ? payloads.job(p) : null;
            } else {
                skip(p);
            }
        }
        return new Message.Assign(require(p, job, "job"));
    }

    /** Skips every field of a frame this version does not read; null, for a type it does not know. */
    private static Message unknown(JsonParser p) throws IOException {
        while (nextField(p) != null) {
            skip(p);
        }
        return null;
    }

    static String describe(JsonNode node) {
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
}
