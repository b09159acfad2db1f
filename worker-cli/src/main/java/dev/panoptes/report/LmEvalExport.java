package dev.panoptes.report;

import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.suite.RunManifest;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
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
 * <p><b>Loglikelihood.</b> A model asked a loglikelihood task's continuations (one-choice
 * vignettes) gets lm-eval's loglikelihood files: {@code "perplexity,none"} (exp(-mean ll) over the
 * answers, lm-eval's {@code perplexity} aggregation) with {@code "perplexity_stderr,none"} (the
 * delta method's exp(-m) SE(m), where lm-eval bootstraps; {@code panoptes.perplexity_interval}
 * gives the interval and its method, {@link Perplexity}), then {@code "acc,none"} (is_greedy)
 * with its stderr; {@code output_type: loglikelihood}, perplexity's {@code higher_is_better}
 * false; sample lines with one request and {@code [[ll, is_greedy]]}
 * ({@link LmEvalContinuationLines}).
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
    /** The figure of a loglikelihood task beside acc: exp(-mean ll), lm-eval's perplexity aggregation. */
    static final String PERPLEXITY = "perplexity";
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
            Perplexity.Figure perplexity = choiceFigures != null ? null
                    : stats.choiceMetrics().perplexity().get(model.model());
            String metric = metricOf(info.scorer());
            LmEvalSamples.Shape shape = choiceFigures != null ? LmEvalSamples.Shape.MULTIPLE_CHOICE
                    : perplexity != null ? LmEvalSamples.Shape.LOGLIKELIHOOD : LmEvalSamples.Shape.GENERATION;
            Map<String, Estimate> byMetric = choiceFigures != null ? choiceFigures
                    : perplexity != null ? Map.of(METRIC, stats.choiceMetrics().byMetric().getOrDefault(METRIC,
                    Map.of()).getOrDefault(model.model(), model.accuracy()))
                    : Map.of(metric, model.accuracy());
            List<Map<String, Object>> lines = LmEvalSamples.lines(rows, docIds, genKwargs, metric, shape);
            Path folder = Files.createDirectories(dir.resolve(modelFolder(model.model())));
            Path samples = folder.resolve("samples_" + task + "_" + date + ".jsonl");
            try (BufferedWriter out = Files.newBufferedWriter(samples, StandardCharsets.UTF_8)) {
                for (Map<String, Object> line : lines) {
                    out.write(PythonJson.dumpsLine(line));
                    out.write('\n');
                }
            }
            Path results = folder.resolve("results_" + date + ".json");
            Map<String, Object> document = LmEvalResults.results(info, model, task, lines, genKwargs, byMetric, shape, perplexity);
            Files.writeString(results, PythonJson.dumps(document), StandardCharsets.UTF_8);
            written.add(new Written(model.model(), task, results, samples, lines.size(), info.epochs(),
                    byMetric.values().iterator().next()));
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
}
