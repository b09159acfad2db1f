package dev.panoptes.worker.report;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The record of runs as a JSON document, {@code {"runs": [{"manifest": {...}}, ...]}}, written
 * next to an export by {@code results --manifest}: the same {@link RunCard} entries the HTML
 * report shows, null for what a run did not record. Stateless and thread-safe.
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
