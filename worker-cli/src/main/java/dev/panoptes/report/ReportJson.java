package dev.panoptes.report;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Transcripts;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.UnstoredSpend;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.GroupMean;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.stats.Perplexity;

import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Map;

/**
 * The data block {@link HtmlReport} embeds: each run's header and statistics, with raw numbers
 * (NaN as null) for anyone who wants to read them back, and the samples as rows of display
 * strings, which the page's script turns into the samples table.
 *
 * <p>Samples are rows rather than objects to keep a 20,000-row page small; their columns are
 * named once in {@code sampleColumns}. Stateless.
 */
final class ReportJson {
    /** The samples table's columns, in order; the report's header row uses the same names. */
    static final List<String> SAMPLE_COLUMNS = List.of("run", "model", "epoch", "vignette", "prompt",
            "response", "expected", "score", "explanation", "error", "cached from");
    /** Columns holding free text, which the page shows in a scrolling box. */
    static final List<Integer> LONG_COLUMNS = List.of(4, 5, 6, 8, 9);
    /** Columns the page sorts as numbers rather than as text. */
    static final List<Integer> NUMERIC_COLUMNS = List.of(2, 7);

    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(StreamWriteFeature.AUTO_CLOSE_TARGET)
            .build();
    private static final ObjectMapper TREES = new ObjectMapper(JSON);

    private ReportJson() {
    }

    /**
     * Writes the JSON for {@code runs}, with at most {@code embedded} samples in total, taken
     * run by run in storage order.
     *
     * @param out where the JSON goes, already made safe for a script element; not closed
     */
    static void write(List<RunData> runs, List<RunStats> stats, int embedded, Writer out) throws IOException {
        write(runs, stats, List.of(), embedded, out);
    }

    /** As {@link #write(List, List, int, Writer)}, with the comparisons {@code compare} made (may be empty). */
    static void write(List<RunData> runs, List<RunStats> stats, List<ModelComparison.Result> comparisons, int embedded,
                      Writer out) throws IOException {
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("generator", "panoptes");
            g.writeStringField("intervalMethod", Accuracy.METHOD);
            g.writeStringField("differenceMethod", PairedDifference.METHOD);
            g.writeArrayFieldStart("runs");
            for (RunStats run : stats) {
                writeRun(g, run);
            }
            g.writeEndArray();
            if (!comparisons.isEmpty()) {
                g.writeArrayFieldStart("comparisons");
                for (ModelComparison.Result c : comparisons) {
                    writeComparison(g, c, Integer.MAX_VALUE);
                }
                g.writeEndArray();
            }
            String groupBy = stats.isEmpty() ? null : stats.get(0).groupBy();
            g.writeStringField("groupBy", groupBy);
            int total = runs.stream().mapToInt(r -> r.samples().size()).sum();
            g.writeNumberField("samplesTotal", total);
            g.writeNumberField("samplesEmbedded", Math.min(total, embedded));
            g.writeArrayFieldStart("sampleColumns");
            for (String column : SAMPLE_COLUMNS) {
                g.writeString(column);
            }
            g.writeEndArray();
            g.writeArrayFieldStart("sampleLongColumns");
            for (int column : LONG_COLUMNS) {
                g.writeNumber(column);
            }
            g.writeEndArray();
            g.writeArrayFieldStart("sampleNumericColumns");
            for (int column : NUMERIC_COLUMNS) {
                g.writeNumber(column);
            }
            g.writeEndArray();
            // Each sample's value of the group-by key, parallel to samples, for the group filter.
            g.writeArrayFieldStart("sampleGroups");
            int grouped = 0;
            for (RunData run : runs) {
                for (SampleRow sample : run.samples()) {
                    if (grouped == embedded) {
                        break;
                    }
                    g.writeString(groupBy == null ? "" : RunStats.groupOf(sample, groupBy));
                    grouped++;
                }
            }
            g.writeEndArray();
            // Each sample's transcript (a sandboxed sample's turns, tool calls and outputs), parallel
            // to samples: null for one without. Re-read and written as JSON, never spliced in as text.
            g.writeArrayFieldStart("sampleTranscripts");
            int transcribed = 0;
            for (RunData run : runs) {
                for (SampleRow sample : run.samples()) {
                    if (transcribed == embedded) {
                        break;
                    }
                    JsonNode transcript = sample.hasTranscript() ? Transcripts.tree(sample.transcript()) : null;
                    if (transcript == null || !transcript.isObject()) {
                        g.writeNull();
                    } else {
                        TREES.writeTree(g, transcript);
                    }
                    transcribed++;
                }
            }
            g.writeEndArray();
            g.writeArrayFieldStart("samples");
            int written = 0;
            for (RunData run : runs) {
                for (SampleRow sample : run.samples()) {
                    if (written == embedded) {
                        break;
                    }
                    writeSample(g, sample);
                    written++;
                }
            }
            g.writeEndArray();
            g.writeEndObject();
        }
    }

    /** A sample's cells as people see them: the same strings in the page and in any export. */
    static List<String> sampleCells(SampleRow s) {
        return List.of(s.runId(), s.model(), Integer.toString(s.epoch()), s.vignetteId(), orEmpty(s.prompt()),
                orEmpty(s.response()), orEmpty(s.expected()), Figures.score(s.figureScore()), orEmpty(s.explanation()),
                orEmpty(s.error()), s.cached() ? orEmpty(s.cachedFrom()) : "");
    }

    private static void writeSample(JsonGenerator g, SampleRow sample) throws IOException {
        g.writeStartArray();
        for (String cell : sampleCells(sample)) {
            g.writeString(cell);
        }
        g.writeEndArray();
    }

    private static void writeRun(JsonGenerator g, RunStats stats) throws IOException {
        RunInfo info = stats.info();
        g.writeStartObject();
        g.writeStringField("runId", info.runId());
        g.writeStringField("suite", info.suite());
        g.writeArrayFieldStart("models");
        for (String model : info.models()) {
            g.writeString(model);
        }
        g.writeEndArray();
        g.writeStringField("scorer", info.scorer());
        if (info.scoring() == null) {
            g.writeNullField("scoring");
        } else {
            g.writeNumberField("scoring", info.scoring().number());
        }
        g.writeNumberField("epochs", info.epochs());
        g.writeStringField("startedAt", info.startedAt() == null ? null : info.startedAt().toString());
        g.writeNumberField("vignettes", info.vignettes());
        g.writeStringField("groupBy", stats.groupBy());
        writeCard(g, info);
        writeNotStored(g, NotStored.of(info, Prices.NONE));
        g.writeArrayFieldStart("modelStats");
        for (RunStats.ModelStats m : stats.models()) {
            g.writeStartObject();
            g.writeStringField("model", m.model());
            g.writeNumberField("samples", m.samples());
            g.writeNumberField("scored", m.scored());
            g.writeNumberField("unscored", m.unscored());
            g.writeFieldName("accuracy");
            writeEstimate(g, m.accuracy());
            g.writeObjectFieldStart("byGroup");
            for (Map.Entry<String, Estimate> group : m.byGroup().entrySet()) {
                g.writeFieldName(group.getKey());
                writeEstimate(g, group.getValue());
            }
            g.writeEndObject();
            if (m.byGroup().size() > 1) {
                // Each group counted once (lm-eval's weight_by_size: false); "accuracy" weighs by size.
                g.writeFieldName("groupMean");
                writeEstimate(g, GroupMean.of(m.byGroup().values()));
            }
            g.writeNumberField("promptTokens", m.promptTokens());
            g.writeNumberField("completionTokens", m.completionTokens());
            g.writeNumberField("failures", m.failures());
            g.writeNumberField("failedAnswers", m.failedAnswers());
            g.writeFieldName("accuracyWithoutFailed");
            writeEstimate(g, m.withoutFailed());
            Perplexity.Figure perplexity = stats.choiceMetrics().perplexity().get(m.model());
            if (perplexity != null) {
                // A loglikelihood task's: exp(-mean ll) with its t interval through exp(-x).
                g.writeFieldName("perplexity");
                writePerplexity(g, perplexity);
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeArrayFieldStart("comparison");
        for (RunStats.Comparison c : stats.comparison()) {
            g.writeStartObject();
            g.writeStringField("baseline", c.baseline());
            g.writeStringField("model", c.model());
            g.writeNumberField("sharedVignettes", c.sharedVignettes());
            writeDifference(g, c.paired());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeArrayFieldStart("workers");
        for (RunStats.WorkerStats w : stats.workers()) {
            g.writeStartObject();
            g.writeStringField("workerId", w.workerId());
            g.writeNumberField("jobs", w.jobs());
            g.writeNumberField("samples", w.samples());
            g.writeNumberField("failures", w.failures());
            g.writeNumberField("quarantines", w.quarantines());
            writeLong(g, "latencyP50Ms", w.latencyP50Ms());
            writeLong(g, "latencyP95Ms", w.latencyP95Ms());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /**
     * {@code notStored}: what the run's sittings spent on answers never stored, as the coordinator's
     * summary JSON has it (attempts, tokens) with the same per model; zeros and no models when
     * nothing was.
     */
    private static void writeNotStored(JsonGenerator g, NotStored notStored) throws IOException {
        g.writeObjectFieldStart("notStored");
        g.writeNumberField("attempts", notStored.attempts());
        g.writeObjectFieldStart("tokens");
        g.writeNumberField("prompt", notStored.tokens().promptTokens());
        g.writeNumberField("completion", notStored.tokens().completionTokens());
        g.writeEndObject();
        g.writeNumberField("sittings", notStored.sittings());
        g.writeArrayFieldStart("models");
        for (UnstoredSpend m : notStored.models()) {
            g.writeStartObject();
            g.writeStringField("model", m.model());
            g.writeNumberField("attempts", m.attempts());
            g.writeNumberField("promptTokens", m.promptTokens());
            g.writeNumberField("completionTokens", m.completionTokens());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void writePerplexity(JsonGenerator g, Perplexity.Figure f) throws IOException {
        g.writeStartObject();
        g.writeNumberField("n", f.n());
        g.writeNumberField("clusters", f.clusters());
        writeDouble(g, "perplexity", f.perplexity());
        writeDouble(g, "standardError", f.standardError());
        writeDouble(g, "ciLow", f.ciLow());
        writeDouble(g, "ciHigh", f.ciHigh());
        writeDouble(g, "meanLoglikelihood", f.meanLoglikelihood());
        writeDouble(g, "loglikelihoodStandardError", f.loglikelihoodStandardError());
        g.writeBooleanField("clustered", f.clustered());
        g.writeStringField("intervalMethod", Perplexity.METHOD);
        g.writeEndObject();
    }

    private static void writeEstimate(JsonGenerator g, Estimate e) throws IOException {
        g.writeStartObject();
        g.writeNumberField("n", e.n());
        g.writeNumberField("clusters", e.clusters());
        writeDouble(g, "mean", e.mean());
        writeDouble(g, "standardError", e.standardError());
        writeDouble(g, "ciLow", e.ciLow());
        writeDouble(g, "ciHigh", e.ciHigh());
        writeDouble(g, "effectiveN", e.effectiveN());
        g.writeBooleanField("clustered", e.clustered());
        g.writeEndObject();
    }

    /** The run card ({@link RunCard}) as an object of key to value, null for what was not recorded. */
    static void writeCard(JsonGenerator g, RunInfo info) throws IOException {
        g.writeObjectFieldStart("manifest");
        for (RunCard.Entry entry : RunCard.of(info)) {
            g.writeStringField(entry.key(), entry.value());
        }
        g.writeEndObject();
    }

    /** A paired difference's figures, as fields of the object being written. */
    static void writeDifference(JsonGenerator g, PairedDifference d) throws IOException {
        writeDouble(g, "difference", d.difference());
        writeDouble(g, "standardError", d.standardError());
        writeDouble(g, "ciLow", d.ciLow());
        writeDouble(g, "ciHigh", d.ciHigh());
        writeDouble(g, "pValue", d.pValue());
    }

    /**
     * One comparison of {@code compare}: both sides, the vignette counts, the difference and the
     * first {@code maxChanged} vignettes whose score changed (all of them in the JSON output).
     */
    static void writeComparison(JsonGenerator g, ModelComparison.Result c, int maxChanged) throws IOException {
        g.writeStartObject();
        g.writeObjectFieldStart("baseline");
        g.writeStringField("run", c.baselineRun());
        g.writeStringField("model", c.baselineModel());
        writeScoring(g, c.baselineScoring(), c.baselineScorer());
        g.writeNumberField("vignettes", c.baselineVignettes());
        g.writeEndObject();
        g.writeObjectFieldStart("other");
        g.writeStringField("run", c.run());
        g.writeStringField("model", c.model());
        writeScoring(g, c.scoring(), c.scorer());
        g.writeNumberField("vignettes", c.vignettes());
        g.writeEndObject();
        g.writeBooleanField("scorersDiffer", c.scorersDiffer());
        g.writeNumberField("sharedVignettes", c.shared());
        g.writeObjectFieldStart("leftOut");
        g.writeNumberField("onlyBaseline", c.onlyBaseline());
        g.writeNumberField("onlyOther", c.onlyOther());
        g.writeNumberField("askedDifferently", c.differing());
        g.writeEndObject();
        writeDifference(g, c.difference());
        g.writeNumberField("changedCount", c.changed().size());
        g.writeArrayFieldStart("changed");
        for (ModelComparison.Changed v : c.changed().subList(0, Math.min(maxChanged, c.changed().size()))) {
            g.writeStartObject();
            g.writeStringField("vignetteId", v.vignetteId());
            g.writeNumberField("baseline", v.baseline());
            g.writeNumberField("other", v.other());
            g.writeNumberField("difference", v.difference());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeArrayFieldStart("metrics");
        for (MetricComparison m : c.metrics()) {
            writeMetric(g, m);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /**
     * One metric of a comparison ({@link MetricComparison}): its paired difference over every
     * shared vignette, per group ({@code groups}) and the mean over the groups ({@code groupMean},
     * null with fewer than two).
     */
    private static void writeMetric(JsonGenerator g, MetricComparison m) throws IOException {
        g.writeStartObject();
        g.writeStringField("metric", m.metric());
        g.writeStringField("groupBy", m.groupBy());
        writeCountedDifference(g, m.difference());
        g.writeArrayFieldStart("groups");
        for (MetricComparison.Group group : m.groups()) {
            g.writeStartObject();
            g.writeStringField("group", group.group());
            writeCountedDifference(g, group.difference());
            g.writeEndObject();
        }
        g.writeEndArray();
        if (m.groupMean() == null) {
            g.writeNullField("groupMean");
        } else {
            g.writeObjectFieldStart("groupMean");
            g.writeStringField("method", PairedDifference.MEAN_METHOD);
            writeCountedDifference(g, m.groupMean());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    private static void writeCountedDifference(JsonGenerator g, PairedDifference d) throws IOException {
        g.writeNumberField("sharedVignettes", d.vignettes());
        writeDifference(g, d);
    }

    /** A side's scoring number (null when its run has none) and scorer. */
    private static void writeScoring(JsonGenerator g, int number, String scorer) throws IOException {
        if (number == 0) {
            g.writeNullField("scoring");
        } else {
            g.writeNumberField("scoring", number);
        }
        g.writeStringField("scorer", scorer);
    }

    /** JSON has no NaN; an undefined figure is null. */
    private static void writeDouble(JsonGenerator g, String name, double value) throws IOException {
        if (Double.isFinite(value)) {
            g.writeNumberField(name, value);
        } else {
            g.writeNullField(name);
        }
    }

    private static void writeLong(JsonGenerator g, String name, Long value) throws IOException {
        if (value == null) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, value);
        }
    }

    private static String orEmpty(String text) {
        return text == null ? "" : text;
    }
}
