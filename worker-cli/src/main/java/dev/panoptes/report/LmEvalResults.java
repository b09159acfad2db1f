package dev.panoptes.report;

import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.SuiteSubset;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.panoptes.report.LmEvalExport.FILTER;
import static dev.panoptes.report.LmEvalExport.PERPLEXITY;
import static dev.panoptes.report.LmEvalExport.SOURCE;
import static dev.panoptes.report.LmEvalExport.modelFolder;

/**
 * The {@code results_<date>.json} document of one model of a run, laid out as lm-evaluation-harness
 * writes it ({@link LmEvalExport} says what each figure is), with what lm-eval's layout has no field
 * for under {@code panoptes}. Stateless; any thread.
 */
final class LmEvalResults {
    private LmEvalResults() {
    }

    /**
     * @param byMetric   the figures written, metric to estimate, the first the main one
     * @param shape      how the model was asked
     * @param perplexity a loglikelihood task's perplexity, written first; null for other shapes
     */
    static Map<String, Object> results(RunInfo info, RunStats.ModelStats model, String task,
                                               List<Map<String, Object>> lines, Map<String, Object> genKwargs,
                                               Map<String, Estimate> byMetric, LmEvalSamples.Shape shape,
                                               Perplexity.Figure perplexity) {
        RunManifest manifest = info.manifest();
        Estimate acc = byMetric.values().iterator().next();
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("alias", task);
        if (perplexity != null) {
            figures.put("perplexity," + FILTER, finite(perplexity.perplexity()));
            figures.put("perplexity_stderr," + FILTER, perplexity.hasStandardError() ? perplexity.standardError()
                    : "N/A");
        }
        for (Map.Entry<String, Estimate> e : byMetric.entrySet()) {
            Estimate figure = e.getValue();
            figures.put(e.getKey() + "," + FILTER, finite(figure.mean()));
            figures.put(e.getKey() + "_stderr," + FILTER, figure.hasStandardError() ? figure.standardError() : "N/A");
        }
        Integer nShot = manifest == null ? null : manifest.fewShot() == null ? Integer.valueOf(0) : null;
        int original = info.vignettes() > 0 ? info.vignettes()
                : (int) lines.stream().map(l -> l.get("doc_id")).distinct().count();

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("results", Map.of(task, figures));
        r.put("group_subtasks", Map.of(task, List.of()));
        List<String> metrics = new ArrayList<>();
        if (perplexity != null) {
            metrics.add(PERPLEXITY);
        }
        metrics.addAll(byMetric.keySet());
        r.put("configs", Map.of(task, taskConfig(info, task, nShot, genKwargs, metrics, shape)));
        r.put("versions", Map.of(task, "N/A"));
        r.put("n-shot", single(task, nShot));
        Map<String, Object> higher = new LinkedHashMap<>();
        // Lower perplexity is better, as lm-eval's registry says; every other figure here is a score.
        metrics.forEach(m -> higher.put(m, !m.equals(PERPLEXITY)));
        r.put("higher_is_better", Map.of(task, higher));
        Map<String, Object> counts = new LinkedHashMap<>();
        counts.put("original", original);
        counts.put("effective", lines.size());
        r.put("n-samples", Map.of(task, counts));
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("model", SOURCE);
        config.put("model_args", "model=" + model.model());
        config.put("batch_size", null);
        config.put("batch_sizes", List.of());
        config.put("device", null);
        config.put("use_cache", null);
        SuiteSubset subset = manifest == null ? null : manifest.subset();
        config.put("limit", subset == null ? null : subset.limit());
        config.put("gen_kwargs", genKwargs.isEmpty() ? null : genKwargs);
        r.put("config", config);
        r.put("git_hash", null);
        r.put("date", seconds(info.startedAt()));
        r.put("task_hashes", Map.of(task, LmEvalSamples.taskHash(lines)));
        r.put("model_source", SOURCE);
        r.put("model_name", model.model());
        r.put("model_name_sanitized", modelFolder(model.model()));
        String system = manifest == null ? null : manifest.systemPrompt();
        r.put("system_instruction", system);
        r.put("system_instruction_sha", system == null ? null : LmEvalSamples.sha256(system));
        // Panoptes puts few-shot examples before the prompt as user and assistant turns.
        r.put("fewshot_as_multiturn", manifest == null ? null : manifest.fewShot() != null);
        r.put("chat_template", null);
        r.put("chat_template_sha", null);
        r.put("start_time", seconds(info.startedAt()));
        r.put("end_time", seconds(info.finishedAt()));
        // The time spent evaluating: the sum of the run's sittings, not the hours between them.
        Duration worked = info.workedFor();
        r.put("total_evaluation_time_seconds", worked == null ? null : Double.toString(worked.toNanos() / 1e9));
        Map<String, Object> panoptes = panoptes(info, model, acc, byMetric);
        if (perplexity != null) {
            panoptes.put("perplexity_interval", perplexityInterval(perplexity));
        }
        r.put("panoptes", panoptes);
        return r;
    }

    private static Map<String, Object> taskConfig(RunInfo info, String task, Integer nShot,
                                                  Map<String, Object> genKwargs, java.util.Collection<String> metrics,
                                                  LmEvalSamples.Shape shape) {
        boolean choices = shape != LmEvalSamples.Shape.GENERATION;
        RunManifest manifest = info.manifest();
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("task", task);
        c.put("dataset_path", info.suite());
        c.put("output_type", switch (shape) {
            case MULTIPLE_CHOICE -> "multiple_choice";
            case LOGLIKELIHOOD -> "loglikelihood";
            case GENERATION -> "generate_until";
        });
        // The fields of each sample's doc that hold the prompt and the target.
        c.put("doc_to_text", "prompt");
        c.put("doc_to_target", "expected");
        c.put("num_fewshot", nShot);
        // Epochs are lm-eval's repeats; every repeat is scored, so the filter keeps them all.
        int repeats = Math.max(1, info.epochs());
        c.put("repeats", repeats);
        Map<String, Object> keep = new LinkedHashMap<>();
        keep.put("function", repeats == 1 ? "take_first" : "take_first_k");
        if (repeats > 1) {
            keep.put("k", repeats);
        }
        Map<String, Object> filter = new LinkedHashMap<>();
        filter.put("name", FILTER);
        filter.put("filter", List.of(keep));
        c.put("filter_list", List.of(filter));
        List<Map<String, Object>> metricList = new ArrayList<>();
        for (String name : metrics) {
            Map<String, Object> metric = new LinkedHashMap<>();
            metric.put("metric", name);
            metric.put("aggregation", name.equals(PERPLEXITY) ? PERPLEXITY : "mean");
            metric.put("higher_is_better", !name.equals(PERPLEXITY));
            metricList.add(metric);
        }
        c.put("metric_list", metricList);
        // A task asked by log-likelihood generates nothing: lm-eval's config of one has no generation_kwargs.
        c.put("generation_kwargs", choices ? null : genKwargs);
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("scorer", info.scorer());
        meta.put("epochs", info.epochs());
        meta.put("suite_sha256", manifest == null ? null : manifest.suiteSha256());
        meta.put("few_shot", manifest == null ? null : manifest.fewShot());
        meta.put("few_shot_sha256", manifest == null ? null : manifest.fewShotSha256());
        c.put("metadata", meta);
        return c;
    }

    /** The run and the figure's details that lm-eval's layout has no field for. */
    private static Map<String, Object> panoptes(RunInfo info, RunStats.ModelStats model, Estimate acc,
                                                Map<String, Estimate> byMetric) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("run_id", info.runId());
        p.put("tool_version", info.manifest() == null ? null : info.manifest().toolVersion());
        p.put("label", info.manifest() == null ? null : info.manifest().label());
        p.put("scorer", info.scorer());
        p.put("scoring", info.scoring() == null ? null : info.scoring().number());
        p.put("epochs", info.epochs());
        SuiteSubset subset = info.manifest() == null ? null : info.manifest().subset();
        p.put("subset", subset == null ? null : subsetJson(subset));
        p.put("wall_span_seconds", info.wallSpan() == null ? null : info.wallSpan().toNanos() / 1e9);
        List<Map<String, Object>> sittings = new ArrayList<>();
        for (RunSitting s : info.sittings()) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("start_time", seconds(s.startedAt()));
            each.put("end_time", seconds(s.endedAt()));
            each.put("end_noted", s.ended());
            each.put("answers_stored", s.answers());
            sittings.add(each);
        }
        p.put("sittings", sittings);
        p.put("stderr", stderrMeaning(acc));
        p.put("interval", interval(acc));
        for (Map.Entry<String, Estimate> e : byMetric.entrySet()) {
            if (e.getValue() != acc) {
                p.put(e.getKey() + "_interval", interval(e.getValue()));
            }
        }
        p.put("samples", model.samples());
        p.put("scored", model.scored());
        p.put("unscored", model.unscored());
        p.put("failed_answers", model.failedAnswers());
        p.put("acc_without_failed", finite(model.withoutFailed().mean()));
        p.put("failed_jobs", model.failures());
        p.put("prompt_tokens", model.promptTokens());
        p.put("completion_tokens", model.completionTokens());
        return p;
    }

    /** Perplexity's interval and what its stderr is, which lm-eval's layout has no field for. */
    private static Map<String, Object> perplexityInterval(Perplexity.Figure figure) {
        Map<String, Object> interval = new LinkedHashMap<>();
        interval.put("method", Perplexity.METHOD);
        interval.put("level", 0.95);
        interval.put("low", figure.hasInterval() ? figure.ciLow() : null);
        interval.put("high", figure.hasInterval() ? figure.ciHigh() : null);
        interval.put("mean_loglikelihood", finite(figure.meanLoglikelihood()));
        interval.put("loglikelihood_stderr", finite(figure.loglikelihoodStandardError()));
        interval.put("stderr", "delta method, exp(-m) * SE(m), SE(m) " + (figure.clustered()
                ? "cluster-robust over " + figure.clusters() + " vignettes (" + figure.n() + " answers)"
                : "s / sqrt(n) over " + figure.n() + " answers") + "; lm-eval bootstraps perplexity's stderr instead");
        return interval;
    }

    private static Map<String, Object> interval(Estimate figure) {
        Map<String, Object> interval = new LinkedHashMap<>();
        interval.put("method", Accuracy.METHOD);
        interval.put("level", 0.95);
        interval.put("low", finite(figure.ciLow()));
        interval.put("high", finite(figure.ciHigh()));
        interval.put("effective_n", finite(figure.effectiveN()));
        return interval;
    }

    /** A subset as JSON: {@code sample_ids}, {@code shuffle} (the seed) and {@code limit}, null when not given. */
    static Map<String, Object> subsetJson(SuiteSubset subset) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sample_ids", subset.sampleIds().isEmpty() ? null : subset.sampleIds());
        m.put("shuffle", subset.shuffleSeed());
        m.put("limit", subset.limit());
        return m;
    }

    /** What {@code acc_stderr,none} holds, in words. */
    static String stderrMeaning(Estimate acc) {
        if (!acc.hasStandardError()) {
            return "undefined (fewer than two scored samples, or two vignettes when clustered): written as N/A";
        }
        if (acc.clustered()) {
            return "cluster-robust standard error of the mean score, clustered by vignette (" + acc.clusters()
                    + " vignettes, " + acc.n() + " samples): epochs repeat a vignette rather than add a question";
        }
        return "standard error of the mean score, s / sqrt(n) with the n - 1 sample deviation (lm-eval's"
                + " mean_stderr; " + acc.n() + " samples, one per vignette)";
    }

    private static Map<String, Object> single(String key, Object value) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put(key, value);
        return map;
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }

    /** Seconds since the epoch as lm-eval's {@code time.time()} gives them; null when unknown. */
    private static Double seconds(Instant when) {
        return when == null ? null : when.getEpochSecond() + when.getNano() / 1e9;
    }
}
