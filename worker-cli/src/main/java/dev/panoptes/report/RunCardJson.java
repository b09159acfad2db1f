package dev.panoptes.report;

import dev.panoptes.control.store.Scoring;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The record of runs as a JSON document, {@code {"runs": [{"manifest": {...}, "runManifest": {...},
 * "scoring": {...}}, ...]}}, written next to an export by {@code results --manifest}. {@code manifest}
 * holds the same {@link RunCard} entries the HTML report shows, as people read them (null for what
 * a run did not record); {@code runManifest} is the run's manifest as the store keeps it, typed
 * (numbers as numbers, null for a parameter left to the model API), for programs that re-run or
 * check a run (null for a legacy run); {@code scoring} is the scoring the export's scores come
 * from (null when the run has none). Stateless and thread-safe.
 */
public final class RunCardJson {
    private static final JsonFactory JSON = new JsonFactory();

    private RunCardJson() {
    }

    /** The document for these runs, pretty-printed, ending with a newline. */
    public static String of(List<RunData> runs) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter());
            g.writeStartObject();
            g.writeArrayFieldStart("runs");
            for (RunData run : runs) {
                g.writeStartObject();
                ReportJson.writeCard(g, run.info());
                g.writeFieldName("runManifest");
                if (run.info().manifest() == null) {
                    g.writeNull();
                } else {
                    g.writeRawValue(run.info().manifest().toJson());
                }
                Scoring scoring = run.scoring();
                if (scoring == null) {
                    g.writeNullField("scoring");
                } else {
                    g.writeObjectFieldStart("scoring");
                    g.writeNumberField("number", scoring.number());
                    g.writeStringField("scorer", scoring.scorer());
                    g.writeStringField("createdAt", scoring.createdAt().toString());
                    g.writeStringField("origin", scoring.origin());
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory", e);
        }
        return out + "\n";
    }
}
