package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.panoptes.control.EvalSpec;
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

import static dev.panoptes.control.wire.FieldReader.clampToInt;
import static dev.panoptes.control.wire.FieldReader.integer;
import static dev.panoptes.control.wire.FieldReader.nextObject;
import static dev.panoptes.control.wire.FieldReader.require;
import static dev.panoptes.control.wire.FieldReader.skip;
import static dev.panoptes.control.wire.FieldReader.text;

/**
 * Reads the payload objects of PROTOCOL.md (a job with its spec, vignettes and params; an outcome
 * with its records) from a token stream: the one place that knows their fields when reading.
 * Every reader is called with the parser on the object's start and leaves it on the object's
 * end; unknown fields are skipped, JSON null reads as absent, a field of the wrong type or a
 * required one missing is a {@link FieldReader.Fault}, and what the records' constructors refuse
 * is their {@link IllegalArgumentException}.
 *
 * <p>Thread-safe: it holds only Jackson's immutable reader for metadata.
 */
final class PayloadReader {
    /** Reads one nested value; must not insist that nothing follows it, as the codec's mapper does. */
    private final VignetteReader vignettes;

    PayloadReader(ObjectMapper mapper) {
        this.vignettes = new VignetteReader(mapper.readerFor(LinkedHashMap.class)
                .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS));
    }

    /** A Job object: its id and its spec. */
    Job job(JsonParser p) throws IOException {
        String id = null;
        EvalSpec spec = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "id" -> id = text(p);
                case "spec" -> spec = FieldReader.object(p) ? spec(p) : null;
                default -> skip(p);
            }
        }
        require(p, spec, "spec");
        return new Job(new JobId(require(p, id, "id")), spec);
    }

    private EvalSpec spec(JsonParser p) throws IOException {
        String name = null;
        List<Vignette> vignettes = null;
        SpecParams params = SpecParams.NONE;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "name" -> name = text(p);
                case "vignettes" -> vignettes = FieldReader.array(p, "an array") ? vignettes(p) : null;
                case "params" -> params = FieldReader.object(p) ? params(p) : SpecParams.NONE;
                default -> skip(p);
            }
        }
        require(p, vignettes, "vignettes");
        return new EvalSpec(require(p, name, "name"), vignettes, params);
    }

    private List<Vignette> vignettes(JsonParser p) throws IOException {
        List<Vignette> vignettes = new ArrayList<>();
        while (nextObject(p)) {
            vignettes.add(vignette(p));
        }
        return vignettes;
    }

    private static SpecParams params(JsonParser p) throws IOException {
        String system = null;
        Double temperature = null;
        Long maxTokens = null;
        Long seed = null;
        String model = null;
        Double topP = null;
        List<String> stop = null;
        String extraBody = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "system" -> system = text(p);
                case "temperature" -> temperature = FieldReader.number(p);
                case "maxTokens" -> maxTokens = integer(p);
                case "seed" -> seed = integer(p);
                case "model" -> model = text(p);
                case "topP" -> topP = FieldReader.number(p);
                case "stop" -> stop = FieldReader.array(p, "an array of strings") ? strings(p) : null;
                case "extraBody" -> extraBody = text(p);
                default -> skip(p);
            }
        }
        return new SpecParams(system, temperature, maxTokens == null ? null : clampToInt(maxTokens), seed, model,
                topP, stop, extraBody, null);
    }

    /**
     * A Vignette object (see {@link VignetteReader}); fields it does not read are skipped.
     */
    Vignette vignette(JsonParser p) throws IOException {
        return vignettes.read(p, null);
    }

    /** A Vignette object, with the name of every field it did not read added to {@code unused}. */
    Vignette vignette(JsonParser p, java.util.Set<String> unused) throws IOException {
        return vignettes.read(p, unused);
    }

    /** An array's strings, the parser on its start. */
    private static List<String> strings(JsonParser p) throws IOException {
        List<String> strings = new ArrayList<>();
        for (String s = FieldReader.nextText(p); s != null; s = FieldReader.nextText(p)) {
            strings.add(s);
        }
        return strings;
    }

    /** A JobOutcome object: the job's id and one record per vignette. */
    JobOutcome outcome(JsonParser p) throws IOException {
        String jobId = null;
        List<ResponseRecord> records = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "jobId" -> jobId = text(p);
                case "records" -> records = FieldReader.array(p, "an array") ? records(p) : null;
                default -> skip(p);
            }
        }
        require(p, records, "records");
        return new JobOutcome(new JobId(require(p, jobId, "jobId")), records);
    }

    /**
     * The records; one alone (a job of one vignette, the usual size) as an immutable list, which
     * {@link JobOutcome}'s copy keeps as it is instead of copying a list made to be copied.
     */
    private static List<ResponseRecord> records(JsonParser p) throws IOException {
        if (!nextObject(p)) {
            return List.of();
        }
        ResponseRecord first = record(p);
        if (!nextObject(p)) {
            return List.of(first);
        }
        List<ResponseRecord> records = new ArrayList<>();
        records.add(first);
        do {
            records.add(record(p));
        } while (nextObject(p));
        return records;
    }

    private static ResponseRecord record(JsonParser p) throws IOException {
        String vignetteId = null;
        String response = null;
        String model = null;
        String finishReason = null;
        Long latencyMs = null;
        Usage usage = null;
        String error = null;
        String transcript = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "vignetteId" -> vignetteId = text(p);
                case "transcript" -> transcript = text(p);
                case "response" -> response = text(p);
                case "model" -> model = FieldReader.repeatedText(p);
                case "finishReason" -> finishReason = FieldReader.repeatedText(p);
                case "latencyMs" -> latencyMs = integer(p);
                case "usage" -> usage = FieldReader.object(p) ? usage(p) : null;
                case "error" -> error = text(p);
                default -> skip(p);
            }
        }
        return new ResponseRecord(require(p, vignetteId, "vignetteId"), require(p, response, "response"), model,
                finishReason, latencyMs, usage, error, transcript);
    }

    /** A usage object, its start read already (revision 8 also reads a {@code failed} frame's {@code spent} with it). */
    static Usage usage(JsonParser p) throws IOException {
        Long prompt = null;
        Long completion = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            switch (p.currentName()) {
                case "promptTokens" -> prompt = integer(p);
                case "completionTokens" -> completion = integer(p);
                default -> skip(p);
            }
        }
        return new Usage(require(p, prompt, "promptTokens"), require(p, completion, "completionTokens"));
    }
}
