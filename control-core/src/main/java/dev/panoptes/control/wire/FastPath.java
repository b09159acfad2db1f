package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes the frames that flow per job ({@code result}, {@code assign}, {@code heartbeat},
 * {@code failed}) straight from the token stream, without building a tree: the coordinator's
 * selector thread decodes one {@code result} per job, and that is most of its JSON work.
 *
 * <p>It only ever accepts what {@link MessageCodec}'s tree decoding accepts, and builds the same
 * message. Anything it does not expect (a frame whose {@code type} is not its first field, a
 * wrong token type, a missing field, trailing bytes, malformed JSON) makes it give up and
 * return null, and the caller decodes the frame again the careful way, which produces the
 * precise error. So this class has no error messages of its own to keep in step.
 *
 * <p>Stateless and thread-safe.
 */
final class FastPath {
    /** Thrown internally to abandon the fast path; carries no stack trace. */
    private static final class GiveUp extends Exception {
        private static final long serialVersionUID = 1L;
        static final GiveUp INSTANCE = new GiveUp();

        private GiveUp() {
            super("not for the fast path", null, false, false);
        }
    }

    private final JsonFactory factory;
    /** Reads one nested value; must not insist that nothing follows it, as the codec's mapper does. */
    private final ObjectReader metadataReader;

    FastPath(ObjectMapper mapper) {
        this.factory = mapper.getFactory();
        this.metadataReader = mapper.readerFor(LinkedHashMap.class)
                .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** The message, or null when the careful decoder must look at this frame. */
    Message decode(byte[] body, int offset, int length) {
        try (JsonParser p = factory.createParser(body, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME
                    || !"type".equals(p.currentName()) || p.nextToken() != JsonToken.VALUE_STRING) {
                return null;
            }
            Message m;
            switch (p.getText()) {
                case "result":
                    m = result(p);
                    break;
                case "assign":
                    m = assign(p);
                    break;
                case "heartbeat":
                    m = heartbeat(p);
                    break;
                case "failed":
                    m = failed(p);
                    break;
                default:
                    return null;
            }
            return p.nextToken() == null ? m : null;
        } catch (GiveUp | IOException | RuntimeException e) {
            // Malformed or unexpected: the careful decoder will say exactly what is wrong.
            return null;
        }
    }

    /**
     * A whole JSONL suite read with one parser: every vignette, in order, or null when anything
     * is off (malformed JSON, an object not alone on its line, a bad field, a duplicate id), and
     * the caller reads it again line by line to report each problem with its line number.
     */
    List<Vignette> decodeSuite(java.io.InputStream in, List<Integer> lines) {
        try (JsonParser p = factory.createParser(in)) {
            List<Vignette> vignettes = new ArrayList<>();
            java.util.Set<String> ids = new java.util.HashSet<>();
            int lastLine = 0;
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                int line = p.currentTokenLocation().getLineNr();
                if (t != JsonToken.START_OBJECT || line <= lastLine) {
                    return null;
                }
                Vignette v = vignette(p);
                if (p.currentTokenLocation().getLineNr() != line || !ids.add(v.id())) {
                    return null;
                }
                lastLine = line;
                vignettes.add(v);
                lines.add(line);
            }
            return vignettes;
        } catch (GiveUp | IOException | RuntimeException e) {
            return null;
        }
    }

    /** A vignette object on its own (a suite file's line), or null when the careful decoder must look. */
    Vignette decodeVignette(String json) {
        try (JsonParser p = factory.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Vignette v = vignette(p);
            return p.nextToken() == null ? v : null;
        } catch (GiveUp | IOException | RuntimeException e) {
            return null;
        }
    }

    private Message result(JsonParser p) throws IOException, GiveUp {
        JobOutcome outcome = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if ("outcome".equals(p.currentName())) {
                outcome = outcome(p);
            } else {
                skipTopLevel(p);
            }
        }
        return new Message.Result(require(outcome));
    }

    private Message assign(JsonParser p) throws IOException, GiveUp {
        Job job = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if ("job".equals(p.currentName())) {
                job = job(p);
            } else {
                skipTopLevel(p);
            }
        }
        return new Message.Assign(require(job));
    }

    private Message heartbeat(JsonParser p) throws IOException, GiveUp {
        String workerId = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if ("workerId".equals(p.currentName())) {
                workerId = optString(p);
            } else {
                skipTopLevel(p);
            }
        }
        return new Message.Heartbeat(workerId);
    }

    private Message failed(JsonParser p) throws IOException, GiveUp {
        String jobId = null;
        String error = null;
        Boolean retryable = null;
        String scope = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "jobId":
                    jobId = string(p);
                    break;
                case "scope":
                    scope = optString(p);
                    break;
                case "error":
                    error = string(p);
                    break;
                case "retryable":
                    JsonToken t = p.nextToken();
                    if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
                        throw GiveUp.INSTANCE;
                    }
                    retryable = t == JsonToken.VALUE_TRUE;
                    break;
                default:
                    skipTopLevel(p);
            }
        }
        return new Message.Failed(new JobId(require(jobId)), require(error), require(retryable),
                FailureScope.fromWire(scope).orElse(null));
    }

    private JobOutcome outcome(JsonParser p) throws IOException, GiveUp {
        expect(p, JsonToken.START_OBJECT);
        String jobId = null;
        List<ResponseRecord> records = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "jobId":
                    jobId = string(p);
                    break;
                case "records":
                    expect(p, JsonToken.START_ARRAY);
                    records = new ArrayList<>();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        records.add(record(p));
                    }
                    requireCurrent(p, JsonToken.END_ARRAY);
                    break;
                default:
                    skipValue(p);
            }
        }
        return new JobOutcome(new JobId(require(jobId)), require(records));
    }

    /** Reads one record; the parser is on its START_OBJECT. */
    private ResponseRecord record(JsonParser p) throws IOException, GiveUp {
        String vignetteId = null;
        String response = null;
        String model = null;
        String finishReason = null;
        Long latencyMs = null;
        Usage usage = null;
        String error = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "vignetteId":
                    vignetteId = string(p);
                    break;
                case "response":
                    response = string(p);
                    break;
                case "model":
                    model = optString(p);
                    break;
                case "finishReason":
                    finishReason = optString(p);
                    break;
                case "latencyMs":
                    latencyMs = optLong(p);
                    break;
                case "usage":
                    usage = usage(p);
                    break;
                case "error":
                    error = optString(p);
                    break;
                default:
                    skipValue(p);
            }
        }
        return new ResponseRecord(require(vignetteId), require(response), model, finishReason, latencyMs, usage,
                error);
    }

    private Usage usage(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_OBJECT) {
            throw GiveUp.INSTANCE;
        }
        Long prompt = null;
        Long completion = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "promptTokens":
                    prompt = optLong(p);
                    break;
                case "completionTokens":
                    completion = optLong(p);
                    break;
                default:
                    skipValue(p);
            }
        }
        return new Usage(require(prompt), require(completion));
    }

    private Job job(JsonParser p) throws IOException, GiveUp {
        expect(p, JsonToken.START_OBJECT);
        String id = null;
        EvalSpec spec = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if ("id".equals(p.currentName())) {
                id = string(p);
            } else if ("spec".equals(p.currentName())) {
                spec = spec(p);
            } else {
                skipValue(p);
            }
        }
        return new Job(new JobId(require(id)), require(spec));
    }

    private EvalSpec spec(JsonParser p) throws IOException, GiveUp {
        expect(p, JsonToken.START_OBJECT);
        String name = null;
        List<Vignette> vignettes = null;
        SpecParams params = SpecParams.NONE;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "name":
                    name = string(p);
                    break;
                case "vignettes":
                    expect(p, JsonToken.START_ARRAY);
                    vignettes = new ArrayList<>();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        vignettes.add(vignette(p));
                    }
                    requireCurrent(p, JsonToken.END_ARRAY);
                    break;
                case "params":
                    params = params(p);
                    break;
                default:
                    skipValue(p);
            }
        }
        return new EvalSpec(require(name), require(vignettes), params);
    }

    /** Reads one vignette; the parser is on its START_OBJECT. */
    private Vignette vignette(JsonParser p) throws IOException, GiveUp {
        String id = null;
        String prompt = null;
        String expected = null;
        Map<String, Object> metadata = null;
        List<ChatMessage> messages = null;
        String scorer = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "id":
                    id = string(p);
                    break;
                case "prompt":
                    prompt = string(p);
                    break;
                case "expected":
                    expected = optString(p);
                    break;
                case "metadata":
                    metadata = metadata(p);
                    break;
                case "messages":
                    messages = messages(p);
                    break;
                case "scorer":
                    scorer = optString(p);
                    break;
                default:
                    skipValue(p);
            }
        }
        if (messages == null || messages.isEmpty()) {
            return new Vignette(require(id), require(prompt), expected, metadata, List.of(), scorer);
        }
        return new Vignette(require(id), prompt, expected, metadata, messages, scorer);
    }

    /** A chat: an array of {role, content} objects of strings; anything else is for the careful decoder. */
    private static List<ChatMessage> messages(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            throw GiveUp.INSTANCE;
        }
        List<ChatMessage> out = new ArrayList<>();
        while (p.nextToken() == JsonToken.START_OBJECT) {
            String role = null;
            String content = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                switch (p.currentName()) {
                    case "role":
                        role = string(p);
                        break;
                    case "content":
                        content = string(p);
                        break;
                    default:
                        skipValue(p);
                }
            }
            if (role == null || content == null || !ChatMessage.ROLES.contains(role)) {
                throw GiveUp.INSTANCE;
            }
            out.add(new ChatMessage(role, content));
        }
        requireCurrent(p, JsonToken.END_ARRAY);
        return out;
    }

    private Map<String, Object> metadata(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_OBJECT) {
            throw GiveUp.INSTANCE;
        }
        return metadataReader.readValue(p);
    }

    private SpecParams params(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return SpecParams.NONE;
        }
        if (t != JsonToken.START_OBJECT) {
            throw GiveUp.INSTANCE;
        }
        String system = null;
        Double temperature = null;
        Long maxTokens = null;
        Long seed = null;
        String model = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "system":
                    system = optString(p);
                    break;
                case "temperature":
                    JsonToken n = p.nextToken();
                    if (n == JsonToken.VALUE_NUMBER_INT || n == JsonToken.VALUE_NUMBER_FLOAT) {
                        temperature = p.getDoubleValue();
                    } else if (n != JsonToken.VALUE_NULL) {
                        throw GiveUp.INSTANCE;
                    }
                    break;
                case "maxTokens":
                    maxTokens = optLong(p);
                    break;
                case "seed":
                    seed = optLong(p);
                    break;
                case "model":
                    model = optString(p);
                    break;
                default:
                    skipValue(p);
            }
        }
        Integer max = maxTokens == null ? null : (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, maxTokens));
        return new SpecParams(system, temperature, max, seed, model);
    }

    private static String string(JsonParser p) throws IOException, GiveUp {
        if (p.nextToken() != JsonToken.VALUE_STRING) {
            throw GiveUp.INSTANCE;
        }
        return p.getText();
    }

    private static String optString(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.VALUE_STRING) {
            throw GiveUp.INSTANCE;
        }
        return p.getText();
    }

    /** An integer that fits a long (others are clamped by the careful decoder), or null. */
    private static Long optLong(JsonParser p) throws IOException, GiveUp {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw GiveUp.INSTANCE;
        }
        return p.getLongValue();
    }

    /**
     * Skips an unknown top-level field; a second {@code type} field would change what the frame
     * is (the careful decoder lets the last one win), so it is left to the careful decoder.
     */
    private static void skipTopLevel(JsonParser p) throws IOException, GiveUp {
        if ("type".equals(p.currentName())) {
            throw GiveUp.INSTANCE;
        }
        skipValue(p);
    }

    private static void skipValue(JsonParser p) throws IOException {
        p.nextToken();
        p.skipChildren();
    }

    private static void expect(JsonParser p, JsonToken token) throws IOException, GiveUp {
        if (p.nextToken() != token) {
            throw GiveUp.INSTANCE;
        }
    }

    private static void requireCurrent(JsonParser p, JsonToken token) throws GiveUp {
        if (p.currentToken() != token) {
            throw GiveUp.INSTANCE;
        }
    }

    private static <T> T require(T value) throws GiveUp {
        if (value == null) {
            throw GiveUp.INSTANCE;
        }
        return value;
    }
}
