package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Writes {@link Message}s as the JSON of PROTOCOL.md: exactly the protocol's field names, in the
 * protocol's order with {@code type} first (which lets {@link MessageDecoder} read them in one
 * pass), leaving out optional fields that are absent. The one place that knows each message's
 * fields when writing.
 *
 * <p>Thread-safe: the generator belongs to the caller; only Jackson's immutable mapper is held.
 */
final class MessageEncoder {
    // The names of the fields written for every job and every answer (assign, result), quoted and
    // encoded once: a name written from a String is scanned for characters to escape every time.
    private static final SerializedString TYPE = new SerializedString("type");
    private static final SerializedString JOB = new SerializedString("job");
    private static final SerializedString ID = new SerializedString("id");
    private static final SerializedString SPEC = new SerializedString("spec");
    private static final SerializedString NAME = new SerializedString("name");
    private static final SerializedString VIGNETTES = new SerializedString("vignettes");
    private static final SerializedString MESSAGES = new SerializedString("messages");
    private static final SerializedString ROLE = new SerializedString("role");
    private static final SerializedString CONTENT = new SerializedString("content");
    private static final SerializedString PROMPT = new SerializedString("prompt");
    private static final SerializedString SCORER = new SerializedString("scorer");
    private static final SerializedString EXPECTED = new SerializedString("expected");
    private static final SerializedString OUTCOME = new SerializedString("outcome");
    private static final SerializedString JOB_ID = new SerializedString("jobId");
    private static final SerializedString RECORDS = new SerializedString("records");
    private static final SerializedString VIGNETTE_ID = new SerializedString("vignetteId");
    private static final SerializedString RESPONSE = new SerializedString("response");
    private static final SerializedString MODEL = new SerializedString("model");
    private static final SerializedString FINISH_REASON = new SerializedString("finishReason");
    private static final SerializedString LATENCY_MS = new SerializedString("latencyMs");
    private static final SerializedString USAGE = new SerializedString("usage");
    private static final SerializedString PROMPT_TOKENS = new SerializedString("promptTokens");
    private static final SerializedString COMPLETION_TOKENS = new SerializedString("completionTokens");
    private final ObjectMapper mapper;
    private final JsonFactory factory;

    MessageEncoder(ObjectMapper mapper) {
        this.mapper = mapper;
        this.factory = mapper.getFactory();
    }

    /** Writes {@code message} to {@code out}, which must not fail (an in-memory stream). */
    void write(Message message, OutputStream out) {
        try (JsonGenerator g = factory.createGenerator(out, JsonEncoding.UTF8)) {
            writeMessage(g, message);
        } catch (IOException e) {
            // Only an in-memory stream is ever written to.
            throw new UncheckedIOException("could not encode a " + message.type() + " message", e);
        }
    }

    private static void writeStringField(JsonGenerator g, SerializedString name, String value) throws IOException {
        g.writeFieldName(name);
        g.writeString(value);
    }

    private static void writeNumberField(JsonGenerator g, SerializedString name, long value) throws IOException {
        g.writeFieldName(name);
        g.writeNumber(value);
    }

    /** See {@link MessageCodec#encodedSize}. */
    long encodedSize(Vignette v) {
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

    /**
     * Writes one message as the JSON object a frame's body holds, exactly as
     * {@link MessageCodec#encode(Message)} does, to a generator the caller owns (a {@link FrameEncoder}'s).
     *
     * @throws IOException when the generator's target fails
     * @throws IllegalArgumentException when a vignette's metadata cannot be written as JSON
     */
    void writeMessage(JsonGenerator g, Message message) throws IOException {
        g.writeStartObject();
        writeStringField(g, TYPE, message.type());
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
            g.writeFieldName(OUTCOME);
            writeOutcome(g, r.outcome());
        } else if (message instanceof Message.Failed f) {
            g.writeStringField("jobId", f.jobId().value());
            g.writeStringField("error", f.error());
            g.writeBooleanField("retryable", f.retryable());
            if (f.scope() != null) {
                g.writeStringField("scope", f.scope().wireName());
            }
            if (f.spent() != null && f.spent().totalTokens() > 0) {
                g.writeObjectFieldStart("spent");
                g.writeNumberField("promptTokens", f.spent().promptTokens());
                g.writeNumberField("completionTokens", f.spent().completionTokens());
                g.writeEndObject();
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
            g.writeFieldName(JOB);
            writeJob(g, a.job());
        } else if (message instanceof Message.Throttled t) {
            g.writeNumberField("count", t.count());
        } else if (!(message instanceof Message.Drain)) {
            throw new IllegalStateException("no encoding for " + message.getClass());
        }
    }

    /** Writes a Job object as PROTOCOL.md's payload section writes it. */
    void writeJob(JsonGenerator g, Job job) throws IOException {
        g.writeStartObject();
        writeStringField(g, ID, job.id().value());
        g.writeFieldName(SPEC);
        EvalSpec spec = job.spec();
        g.writeStartObject();
        writeStringField(g, NAME, spec.name());
        g.writeFieldName(VIGNETTES);
        g.writeStartArray();
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
            if (p.topP() != null) {
                g.writeNumberField("topP", p.topP());
            }
            if (p.stop() != null) {
                g.writeArrayFieldStart("stop");
                for (String s : p.stop()) {
                    g.writeString(s);
                }
                g.writeEndArray();
            }
            if (p.extraBody() != null) {
                g.writeStringField("extraBody", p.extraBody());
            }
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    /** Writes a Vignette object. */
    void writeVignette(JsonGenerator g, Vignette v) throws IOException {
        g.writeStartObject();
        writeStringField(g, ID, v.id());
        if (v.isChat()) {
            g.writeFieldName(MESSAGES);
            g.writeStartArray();
            for (ChatMessage m : v.messages()) {
                g.writeStartObject();
                writeStringField(g, ROLE, m.role());
                writeStringField(g, CONTENT, m.content());
                g.writeEndObject();
            }
            g.writeEndArray();
        } else {
            writeStringField(g, PROMPT, v.prompt());
        }
        if (v.scorer() != null) {
            writeStringField(g, SCORER, v.scorer());
        }
        if (v.choices() != null) {
            g.writeArrayFieldStart("choices");
            for (String choice : v.choices().texts()) {
                g.writeString(choice);
            }
            g.writeEndArray();
            g.writeStringField("choiceDelimiter", v.choices().delimiter());
        }
        if (v.expected() != null) {
            writeStringField(g, EXPECTED, v.expected());
        }
        if (v.sandbox() != null) {
            g.writeFieldName("sandbox");
            mapper.writeValue(g, v.sandbox().toJson());
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
    void writeOutcome(JsonGenerator g, JobOutcome outcome) throws IOException {
        g.writeStartObject();
        writeStringField(g, JOB_ID, outcome.jobId().value());
        g.writeFieldName(RECORDS);
        g.writeStartArray();
        for (ResponseRecord r : outcome.records()) {
            writeRecord(g, r);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Writes a ResponseRecord object. */
    void writeRecord(JsonGenerator g, ResponseRecord r) throws IOException {
        g.writeStartObject();
        writeStringField(g, VIGNETTE_ID, r.vignetteId());
        writeStringField(g, RESPONSE, r.response());
        if (r.model() != null) {
            writeStringField(g, MODEL, r.model());
        }
        if (r.finishReason() != null) {
            writeStringField(g, FINISH_REASON, r.finishReason());
        }
        if (r.latencyMs() != null) {
            writeNumberField(g, LATENCY_MS, r.latencyMs());
        }
        if (r.usage() != null) {
            g.writeFieldName(USAGE);
            g.writeStartObject();
            writeNumberField(g, PROMPT_TOKENS, r.usage().promptTokens());
            writeNumberField(g, COMPLETION_TOKENS, r.usage().completionTokens());
            g.writeEndObject();
        }
        if (r.error() != null) {
            g.writeStringField("error", r.error());
        }
        if (r.transcript() != null) {
            g.writeStringField("transcript", r.transcript());
        }
        g.writeEndObject();
    }
}
