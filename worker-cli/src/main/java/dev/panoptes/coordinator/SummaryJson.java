package dev.panoptes.coordinator;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.cost.Money;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunStats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * The end-of-run summary as JSON ({@code --summary-json FILE}), for a CI job to read rather than
 * parse the printed lines: the run id, the exit code and what stopped the run, job and answer
 * counts, tokens and cost, the budget, the gates, and per model (and per group) the accuracy with
 * its 95% interval, whose method is named once ({@code interval.method}). Every figure is the one
 * the printed summary shows. Written whole to a temporary file and moved into place, so a reader
 * never sees half of it. Stateless.
 */
public final class SummaryJson {
    /** Money goes in as {@link Money#of} decimals and comes out plain: 0.0000021, never 2.1E-6. */
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

    private SummaryJson() {
    }

    /** Writes the summary of a run that ended with {@code ending} to {@code file}. */
    static void write(Path file, RunSummary summary, RunEnding ending, RunGates gates) throws IOException {
        ObjectNode root = MAPPER.createObjectNode();
        RunStats stats = summary.stats();
        root.put("runId", stats.info().runId());
        root.put("complete", summary.allCompleted());
        root.put("exitCode", ending.exitCode());
        root.put("stoppedBy", ending.stoppedBy());
        root.put("elapsedMs", summary.elapsed().toMillis());
        ObjectNode jobs = root.putObject("jobs");
        jobs.put("total", summary.jobs());
        jobs.put("completed", summary.jobsCompleted());
        jobs.put("skipped", summary.jobsSkipped());
        jobs.put("failed", summary.failures().size());
        ObjectNode answers = root.putObject("answers");
        answers.put("expected", summary.answers());
        answers.put("stored", summary.answersStored());
        answers.put("failed", summary.failedAnswers().failed());
        ObjectNode interval = root.putObject("interval");
        interval.put("level", 0.95);
        interval.put("method", Accuracy.METHOD);
        interval.put("scorer", stats.info().scorer());
        root.put("groupBy", stats.groupBy());
        ObjectNode cache = root.putObject("cache");
        cache.put("hits", stats.cacheHits().answers());
        cache.put("fromRuns", stats.cacheHits().fromRuns().size());
        // The tokens the served answers record, spent by the runs that answered them first; "tokens"
        // below is what this run spent.
        tokens(cache.putObject("tokens"), stats.cacheHits().tokens().promptTokens(),
                stats.cacheHits().tokens().completionTokens());
        tokens(root.putObject("tokens"), summary.tokens().promptTokens(), summary.tokens().completionTokens());
        putUsd(root, "costUsd", ending.costs().totalUsd());
        // Tokens paid for by calls of attempts that failed after them: in neither "tokens" nor "costUsd".
        ObjectNode notStored = root.putObject("notStored");
        notStored.put("attempts", ending.unstored().attempts());
        tokens(notStored.putObject("tokens"), ending.unstored().tokens().promptTokens(),
                ending.unstored().tokens().completionTokens());
        putUsd(notStored, "costUsd", ending.unstored().usd(gates.prices()));
        if (ending.budget() != null) {
            ObjectNode budget = root.putObject("budget");
            putUsd(budget, "maxUsd", ending.budget().maxUsd());
            putUsd(budget, "spentUsd", ending.budget().spentUsd());
            putUsd(budget, "notStoredUsd", ending.budget().unstoredUsd());
            budget.put("stopped", ending.stoppedByBudget());
            budget.put("exceeded", ending.overBudget());
        }
        ObjectNode gate = root.putObject("gates");
        gate.put("maxErrorRate", gates.maxErrorRate());
        if (Double.isNaN(gates.failUnder())) {
            gate.putNull("failUnder");
        } else {
            gate.put("failUnder", gates.failUnder());
        }
        gate.putArray("below").addAll(ending.below().stream()
                .map(m -> MAPPER.getNodeFactory().textNode(m.model())).toList());
        var models = root.putArray("models");
        for (RunStats.ModelStats m : stats.models()) {
            ObjectNode model = models.addObject();
            model.put("model", m.model());
            model.put("samples", m.samples());
            model.put("scored", m.scored());
            model.put("unscored", m.unscored());
            model.put("failedAnswers", m.failedAnswers());
            model.put("failedJobs", m.failures());
            estimate(model.putObject("accuracy"), m.accuracy());
            estimate(model.putObject("accuracyWithoutFailed"), m.withoutFailed());
            ObjectNode groups = model.putObject("groups");
            for (Map.Entry<String, Estimate> g : m.byGroup().entrySet()) {
                estimate(groups.putObject(g.getKey()), g.getValue());
            }
            Perplexity.Figure perplexity = stats.choiceMetrics().perplexity().get(m.model());
            if (perplexity != null) {
                // A loglikelihood task's run: exp(-mean ll) with its t interval through exp(-x).
                ObjectNode p = model.putObject("perplexity");
                p.put("n", perplexity.n());
                p.put("vignettes", perplexity.clusters());
                putFinite(p, "perplexity", perplexity.perplexity());
                putFinite(p, "standardError", perplexity.standardError());
                putFinite(p, "ciLow", perplexity.ciLow());
                putFinite(p, "ciHigh", perplexity.ciHigh());
                putFinite(p, "meanLoglikelihood", perplexity.meanLoglikelihood());
                p.put("method", Perplexity.METHOD);
            }
            tokens(model.putObject("tokens"), m.promptTokens(), m.completionTokens());
            putUsd(model, "costUsd", ending.costs().models().stream().filter(c -> c.model().equals(m.model()))
                    .findFirst().map(RunCosts.ModelCost::costUsd).orElse(null));
        }
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(parent, file.getFileName().toString(), ".tmp");
        try {
            MAPPER.writeValue(tmp.toFile(), root);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static void estimate(ObjectNode node, Estimate e) {
        node.put("n", e.n());
        node.put("vignettes", e.clusters());
        putFinite(node, "mean", e.mean());
        putFinite(node, "standardError", e.standardError());
        putFinite(node, "ciLow", e.ciLow());
        putFinite(node, "ciHigh", e.ciHigh());
    }

    private static void tokens(ObjectNode node, long prompt, long completion) {
        node.put("prompt", prompt);
        node.put("completion", completion);
        node.put("total", prompt + completion);
    }

    private static void putUsd(ObjectNode node, String field, Double usd) {
        if (usd == null) {
            node.putNull(field);
        } else {
            node.put(field, Money.of(usd));
        }
    }

    /** NaN (no samples, no spread) is not JSON: null instead. */
    private static void putFinite(ObjectNode node, String field, double value) {
        if (Double.isFinite(value)) {
            node.put(field, value);
        } else {
            node.putNull(field);
        }
    }
}
