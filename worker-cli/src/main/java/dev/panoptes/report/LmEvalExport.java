package dev.panoptes.report;

import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.SuiteSubset;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Writes a run as lm-evaluation-harness writes its output, so that scripts and leaderboards that
 * read lm-eval's files read Panoptes' runs: per model, a folder named as lm-eval names it (the
 * model with {@code "<>:/|\?*[]} runs replaced by {@code __}) holding
 * {@code results_<date>.json} and {@code samples_<task>_<date>.jsonl}.
 *
 * <p><b>One file pair per model.</b> lm-eval evaluates one model per invocation and writes one
 * results file for it; a Panoptes run asks several models, so each gets its own folder and pair,
 * as if lm-eval had been run once per model. The task is the suite (its file name without the
 * extension, with lm-eval's {@code \W -> _}); {@code <date>} is when the run finished (else
 * started, else now) in UTC, in lm-eval's form {@code 2026-12-02T08-15-30.123456}, so exporting a
 * run again writes the same files.
 *
 * <p><b>The figures are the summary's.</b> {@code "acc,none"} is the mean score {@link RunStats}
 * computes (failed answers as 0, unscored answers in no figure) and {@code "acc_stderr,none"} its
 * standard error: the ordinary {@code s / sqrt(n)} lm-eval computes when every vignette was asked
 * once, the cluster-robust one over vignettes when epochs repeat them (lm-eval's would treat a
 * repeat as a new question); {@code panoptes.stderr} in the results says which, and {@code "N/A"}
 * stands where it is undefined, as in lm-eval. {@code n-samples} gives the suite's vignettes as
 * {@code original} and the sample lines (one per vignette) as {@code effective}; the run's epochs
 * are the task config's {@code repeats}, as lm-eval counts them.
 *
 * <p><b>Samples</b> ({@link LmEvalSamples}): one line per vignette, its epochs as lm-eval's
 * repeats in {@code resps}, {@code doc_id} the
 * vignette's place among the run's vignettes (the suite's order when the run asked the whole
 * suite), {@code doc} the vignette ({@code id}, {@code prompt},
 * {@code expected}, {@code metadata}), the metric {@code acc} with the mean figure score of its
 * repeats (null when unscored), lm-eval's hashes, and Panoptes' own facts under {@code panoptes}.
 * {@code acc,none} is the mean over answers, which is lm-eval's mean of the lines' {@code acc}
 * when every vignette has every epoch.
 *
 * <p><b>Multiple choice.</b> A model asked by log-likelihood gets lm-eval's multiple-choice
 * files: {@code "acc,none"}, {@code "acc_stderr,none"}, {@code "acc_norm,none"} and
 * {@code "acc_norm_stderr,none"} in the results (each recomputed from the stored log-likelihoods,
 * as the summary's figures beside the run's scorer are), {@code output_type: multiple_choice}
 * with both metrics in the config, and sample lines with a request per choice and
 * {@code [loglikelihood, is_greedy]} per choice ({@link LmEvalChoiceLines}): every figure is the
 * mean of the lines' values when every document has every epoch.
 *
 * <p>Both files are laid out as lm-eval's Python writes them ({@link PythonJson}): the results
 * indented by two, each sample on one line.
 *
 * <p>What lm-eval records and Panoptes does not know (its git hash, device, batch size, the
 * number of few-shot examples in a file) is null rather than guessed. Stateless; any thread, one
 * run per call. Reads nothing but its {@link RunData}.
 */
public final class LmEvalExport {
    /** The metric a score is written under, but for an exact_match task's ({@link #metricOf}). */
    public static final String METRIC = "acc";
    /** The metric of a run scored by lm-eval's exact_match (a generate_until task file's run). */
    public static final String EXACT_MATCH = "exact_match";
    /** The lm-eval filter the figures are written under: Panoptes filters no answer. */
    public static final String FILTER = "none";
    /** {@code config.model} and {@code model_source}: the "harness" that produced the answers. */
    public static final String SOURCE = "panoptes";

    private static final Pattern MODEL_UNSAFE = Pattern.compile("[\"<>:/|\\\\?*\\[\\]]+");
    private static final Pattern TASK_UNSAFE = Pattern.compile("\\W", Pattern.UNICODE_CHARACTER_CLASS);
    private static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH-mm-ss");

    private LmEvalExport() {
    }

    /**
     * What one call wrote for one model.
     *
     * @param model       the model
     * @param task        the task name in the files
     * @param results     the {@code results_<date>.json} file
     * @param samples     the {@code samples_<task>_<date>.jsonl} file
     * @param sampleLines lines in the samples file: one per vignette
     * @param repeats     the run's epochs, lm-eval's repeats: answers per line
     * @param accuracy    the figure written as {@code acc}, as {@link RunStats} computed it
     */
    public record Written(String model, String task, Path results, Path samples, int sampleLines,
                          int repeats, Estimate accuracy) {
    }

    /** {@link #write(RunData, Path, Clock)} with the system clock (used only for a run with no recorded time). */
    public static List<Written> write(RunData run, Path dir) throws IOException {
        return write(run, dir, Clock.systemUTC());
    }

    /**
     * Writes one folder with a results file and a samples file per model of {@code run} under
     * {@code dir} (created when missing; files of the same name are replaced).
     *
     * @param clock the time of files for a run that recorded neither its end nor its start
     * @return what was written, in the run's model order
     * @throws IOException when a folder or file cannot be written
     */
    public static List<Written> write(RunData run, Path dir, Clock clock) throws IOException {
        Objects.requireNonNull(run, "run");
        Objects.requireNonNull(dir, "dir");
        RunInfo info = run.info();
        RunStats stats = RunStats.of(run, null);
        String task = taskName(info.suite());
        String date = dateId(info.finishedAt() != null ? info.finishedAt()
                : info.startedAt() != null ? info.startedAt() : clock.instant());
        Map<String, Integer> docIds = LmEvalSamples.docIds(run.samples());
        Map<String, Object> genKwargs = genKwargs(info.manifest());
        List<Written> written = new ArrayList<>();
        for (RunStats.ModelStats model : stats.models()) {
            List<SampleRow> rows = run.samples().stream().filter(s -> s.model().equals(model.model())).toList();
            Map<String, Estimate> choiceFigures = choiceFigures(stats, model.model());
            String metric = metricOf(info.scorer());
            List<Map<String, Object>> lines = LmEvalSamples.lines(rows, docIds, genKwargs, metric,
                    choiceFigures != null);
            Path folder = Files.createDirectories(dir.resolve(modelFolder(model.model())));
            Path samples = folder.resolve("samples_" + task + "_" + date + ".jsonl");
            try (BufferedWriter out = Files.newBufferedWriter(samples, StandardCharsets.UTF_8)) {
                for (Map<String, Object> line : lines) {
                    out.write(PythonJson.dumpsLine(line));
                    out.write('\n');
                }
            }
            Path results = folder.resolve("results_" + date + ".json");
            Map<String, Object> document = results(info, model, task, lines, genKwargs,
                    choiceFigures != null ? choiceFigures : Map.of(metric, model.accuracy()), choiceFigures != null);
            Files.writeString(results, PythonJson.dumps(document), StandardCharsets.UTF_8);
            written.add(new Written(model.model(), task, results, samples, lines.size(), info.epochs(),
                    choiceFigures != null ? choiceFigures.get(METRIC) : model.accuracy()));
        }
        return written;
    }

    /**
     * lm-eval's folder name for a model ({@code sanitize_model_name}); a name of dots alone, which
     * would name this folder or the one above, gets a leading {@code _}.
     */
    public static String modelFolder(String model) {
        String folder = MODEL_UNSAFE.matcher(model).replaceAll("__");
        return folder.matches("\\.*") ? "_" + folder : folder;
    }

    /** The task name of a suite: its file name without the extension, {@code \W} as {@code _}. */
    static String taskName(String suite) {
        if (suite == null || suite.isBlank()) {
            return SOURCE;
        }
        String name = suite.substring(Math.max(suite.lastIndexOf('/'), suite.lastIndexOf('\\')) + 1);
        int dot = name.lastIndexOf('.');
        name = dot > 0 ? name.substring(0, dot) : name;
        return name.isEmpty() ? SOURCE : TASK_UNSAFE.matcher(name).replaceAll("_");
    }

    /** Python's {@code datetime.isoformat()} in UTC with ':' as '-': microseconds only when not zero. */
    static String dateId(Instant when) {
        LocalDateTime t = LocalDateTime.ofInstant(when, ZoneOffset.UTC);
        int micros = t.getNano() / 1000;
        return SECONDS.format(t) + (micros == 0 ? "" : String.format(Locale.ROOT, ".%06d", micros));
    }

    /**
     * The multiple-choice figures (metric to estimate, acc then acc_norm) of a model asked by
     * log-likelihood; null when it was not.
     */
    private static Map<String, Estimate> choiceFigures(RunStats stats, String model) {
        Map<String, Map<String, Estimate>> byMetric = stats.choiceMetrics().byMetric();
        Map<String, Estimate> figures = new LinkedHashMap<>();
        for (String metric : LmEvalChoiceLines.METRICS) {
            Estimate e = byMetric.getOrDefault(metric, Map.of()).get(model);
            if (e == null) {
                return null;
            }
            figures.put(metric, e);
        }
        return figures;
    }

    /**
     * The name lm-eval gives the figure of a run scored by {@code scorer}: {@code exact_match} for
     * lm-eval's exact_match (a generate_until task file's scorer), else {@code acc}.
     */
    static String metricOf(String scorer) {
        return scorer != null && (scorer.equals(EXACT_MATCH) || scorer.startsWith(EXACT_MATCH + ":"))
                ? EXACT_MATCH : METRIC;
    }

    /**
     * @param byMetric the figures written, metric to estimate, the first the main one
     * @param choices  true for a model asked by log-likelihood
     */
    private static Map<String, Object> results(RunInfo info, RunStats.ModelStats model, String task,
                                               List<Map<String, Object>> lines, Map<String, Object> genKwargs,
                                               Map<String, Estimate> byMetric, boolean choices) {
        RunManifest manifest = info.manifest();
        Estimate acc = byMetric.values().iterator().next();
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("alias", task);
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
        r.put("configs", Map.of(task, taskConfig(info, task, nShot, genKwargs, byMetric.keySet(), choices)));
        r.put("versions", Map.of(task, "N/A"));
        r.put("n-shot", single(task, nShot));
        Map<String, Object> higher = new LinkedHashMap<>();
        byMetric.keySet().forEach(m -> higher.put(m, true));
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
        r.put("panoptes", panoptes(info, model, acc, byMetric));
        return r;
    }

    private static Map<String, Object> taskConfig(RunInfo info, String task, Integer nShot,
                                                  Map<String, Object> genKwargs, java.util.Collection<String> metrics,
                                                  boolean choices) {
        RunManifest manifest = info.manifest();
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("task", task);
        c.put("dataset_path", info.suite());
        c.put("output_type", choices ? "multiple_choice" : "generate_until");
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
            metric.put("aggregation", "mean");
            metric.put("higher_is_better", true);
            metricList.add(metric);
        }
        c.put("metric_list", metricList);
        // A multiple-choice task generates nothing: lm-eval's config of one has no generation_kwargs.
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

    /** The sampling parameters the run recorded, under lm-eval's names where it has one. */
    private static Map<String, Object> genKwargs(RunManifest manifest) {
        Map<String, Object> kwargs = new LinkedHashMap<>();
        if (manifest != null) {
            putIfKnown(kwargs, "temperature", manifest.temperature());
            putIfKnown(kwargs, "max_gen_toks", manifest.maxTokens());
            putIfKnown(kwargs, "seed", manifest.seed());
        }
        return kwargs;
    }

    private static void putIfKnown(Map<String, Object> map, String key, Object value) {
        if (value != null) {
            map.put(key, value);
        }
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
