package dev.panoptes.report;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import dev.panoptes.control.stats.PairedDifference;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The JSON that {@code compare --json} prints: the method, whether the two sides' scorers differ
 * ({@code scorersDiffer}), each run compared with its database, the scoring shown and its
 * manifest, and per model pair the vignette counts, each side's scoring and scorer, the paired
 * difference with its interval, SE and p-value, every vignette whose score changed, and
 * {@code metrics}: per metric both sides have ({@link MetricComparison}) the same figures over
 * every shared vignette, per group ({@code groups}) and over the groups ({@code groupMean}). NaN is
 * null. Stateless and thread-safe.
 */
public final class ComparisonJson {
    private static final JsonFactory JSON = new JsonFactory();

    private ComparisonJson() {
    }

    /**
     * The document for these comparisons.
     *
     * @param runs        the runs compared (one, or the two sides in order), whose manifests the
     *                    document carries
     * @param databases   the database of each run, as the user named it (parallel to runs)
     * @param comparisons the model pairs, in order
     * @return pretty-printed JSON, ending with a newline
     * @throws IllegalArgumentException when runs and databases differ in length
     */
    public static String of(List<RunData> runs, List<String> databases, List<ModelComparison.Result> comparisons) {
        if (runs.size() != databases.size()) {
            throw new IllegalArgumentException(runs.size() + " runs but " + databases.size() + " databases");
        }
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter());
            g.writeStartObject();
            g.writeStringField("method", PairedDifference.METHOD);
            g.writeStringField("interval", "95% CI from Student's t with (shared vignettes - 1) degrees of freedom");
            g.writeBooleanField("scorersDiffer", ModelComparison.scorersDiffer(runs.get(0),
                    runs.size() == 1 ? null : runs.get(1)));
            g.writeArrayFieldStart("runs");
            for (int i = 0; i < runs.size(); i++) {
                RunData run = runs.get(i);
                g.writeStartObject();
                g.writeStringField("database", databases.get(i));
                g.writeStringField("runId", run.info().runId());
                if (run.scoring() == null) {
                    g.writeNullField("scoring");
                } else {
                    g.writeNumberField("scoring", run.scoring().number());
                }
                g.writeStringField("scorer", run.info().scorer());
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
