package dev.panoptes.worker.report;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import dev.panoptes.control.stats.PairedDifference;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The JSON that {@code compare --json} prints: the method, the manifest of each run compared,
 * and per model pair the vignette counts, the paired difference with its interval, SE and
 * p-value, and every vignette whose score changed. NaN is null. Stateless and thread-safe.
 */
public final class ComparisonJson {
    private static final JsonFactory JSON = new JsonFactory();

    private ComparisonJson() {
    }

    /**
     * The document for these comparisons.
     *
     * @param runs        the runs compared, whose manifests the document carries
     * @param comparisons the model pairs, in order
     * @return pretty-printed JSON, ending with a newline
     */
    public static String of(List<RunData> runs, List<ModelComparison.Result> comparisons) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter());
            g.writeStartObject();
            g.writeStringField("method", PairedDifference.METHOD);
            g.writeStringField("interval", "95% CI from Student's t with (shared vignettes - 1) degrees of freedom");
            g.writeArrayFieldStart("runs");
            for (RunData run : runs) {
                g.writeStartObject();
                ReportJson.writeCard(g, run.info());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("comparisons");
            for (ModelComparison.Result c : comparisons) {
                ReportJson.writeComparison(g, c, Integer.MAX_VALUE);
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory", e);
        }
        return out + "\n";
    }
}
