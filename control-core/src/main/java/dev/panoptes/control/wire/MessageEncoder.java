package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
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
            g.writeFieldName("job");
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
        if (v.choices() != null) {
            g.writeArrayFieldStart("choices");
            for (String choice : v.choices().texts()) {
                g.writeString(choice);
            }
            g.writeEndArray();
            g.writeStringField("choiceDelimiter", v.choices().delimiter());
        }
        if (v.expected() != null) {
            g.writeStringField("expected", v.expected());
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
        g.writeStringField("jobId", outcome.jobId().value());
        g.writeArrayFieldStart("records");
        for (ResponseRecord r : outcome.records()) {
            writeRecord(g, r);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Writes a ResponseRecord object. */
    void writeRecord(JsonGenerator g, ResponseRecord r) throws IOException {
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
        if (r.transcript() != null) {
            g.writeStringField("transcript", r.transcript());
        }
        g.writeEndObject();
    }
}
