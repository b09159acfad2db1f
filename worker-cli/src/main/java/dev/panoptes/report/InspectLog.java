package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.SuiteSubset;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Writes a stored run as Inspect AI eval logs, so that {@code inspect view}, the Inspect log
 * viewer and Inspect's Python API ({@code read_eval_log}) open Panoptes' results: one log per
 * model (format version 2), as one JSON document or as Inspect's {@code .eval} zip
 * ({@link LogFormat}), and the folder's {@code listing.json}, which the viewer reads to list
 * the logs.
 *
 * <p>Each log holds the eval spec (task = the suite, its dataset, the model, the config with
 * epochs and the sampling parameters of the run's manifest), the results (the run's scorer with
 * {@code accuracy} and {@code stderr} metrics: the figures Panoptes prints, from
 * {@link RunStats}, clustered by vignette and with failed answers scored 0), the stats (start and
 * end, token usage), one sample per vignette and epoch ({@link InspectSamples}, epochs numbered
 * from 1 as Inspect numbers them) and the reductions: each vignette's score over its epochs by the
 * {@code mean} reducer the config names, as Inspect reduces a multi-epoch sample. Its
 * {@code status} is {@code "success"}, whatever the run's state: the log carries what is stored.
 *
 * <p>Stateless; any thread. Files are written to a temporary name and moved into place, so a
 * viewer never reads half a log.
 */
public final class InspectLog {
    /** The Inspect eval log format version these logs follow. */
    public static final int FORMAT_VERSION = 2;
    /** The listing the Inspect viewer reads from a log folder. */
    public static final String LISTING = "listing.json";
    /**
     * How a vignette's epochs make one score: their mean, Inspect's default reducer and the
     * figure Panoptes prints (the mean over answers, which is the mean of the vignettes' means
     * when every vignette has every epoch).
     */
    static final String REDUCER = "mean";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssxxx", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private InspectLog() {
    }

    /** The two files an Inspect log can be: the same log, as one JSON document or as a zip. */
    public enum LogFormat {
        /** One JSON document: simple to read with any tool, loaded whole by the viewer. */
        JSON(".json"),
        /** Inspect's {@code .eval} zip: the viewer reads a sample only when it is opened. */
        EVAL(".eval");

        private final String extension;

        LogFormat(String extension) {
            this.extension = extension;
        }

        /** The file name's ending, with its dot. */
        public String extension() {
            return extension;
        }
    }

    /**
     * Writes one {@code .json} log per model of a run into {@code dir}: see
     * {@link #write(RunData, Path, LogFormat)}.
     */
    public static List<Path> write(RunData run, Path dir) throws IOException {
        return write(run, dir, LogFormat.JSON);
    }

    /**
     * Writes one log per model of a run into {@code dir} (created when missing) and adds them to
     * the folder's {@value #LISTING}, keeping the entries of other logs already listed there.
     *
     * @param run    the run, as {@link RunDataLoader} reads it
     * @param dir    the log folder
     * @param format the logs' file form
     * @return the logs written, in model order
     * @throws IOException when a file cannot be written, or an existing listing is not JSON
     */
    public static List<Path> write(RunData run, Path dir, LogFormat format) throws IOException {
        Objects.requireNonNull(run, "run");
        Objects.requireNonNull(format, "format");
        Files.createDirectories(dir);
        RunStats stats = RunStats.of(run, null);
        ObjectNode listing = readListing(dir.resolve(LISTING));
        List<Path> written = new ArrayList<>();
        for (RunStats.ModelStats model : stats.models()) {
            ObjectNode log = log(run, stats, model.model());
            Path file = dir.resolve(fileName(run, model.model(), format));
            writeAtomically(file, format == LogFormat.EVAL ? InspectEvalArchive.zip(log)
                    : PRETTY.writeValueAsBytes(log));
            listing.set(file.getFileName().toString(), listingEntry(log));
            written.add(file);
        }
        writeAtomically(dir.resolve(LISTING), PRETTY.writeValueAsBytes(listing));
        return written;
    }

    /**
     * The eval log of one model of a run, as JSON.
     *
     * @param stats the run's statistics ({@code RunStats.of(run, ...)})
     * @throws IllegalArgumentException when the run has no such model
     */
    public static ObjectNode log(RunData run, RunStats stats, String model) {
        RunStats.ModelStats figures = stats.model(model)
                .orElseThrow(() -> new IllegalArgumentException("run " + run.info().runId() + " has no model " + model));
        RunInfo info = run.info();
        RunManifest manifest = info.manifest();
        String scorer = info.scorer();
        ObjectNode log = JSON.createObjectNode();
        log.put("version", FORMAT_VERSION);
        log.put("status", "success");
        log.set("eval", spec(run, model));
        ObjectNode plan = log.putObject("plan");
        plan.put("name", "plan");
        plan.putArray("steps").addObject().put("solver", "generate").putObject("params");
        plan.set("config", generateConfig(manifest));
        if (scorer != null && figures.scored() > 0) {
            log.set("results", results(figures, scorer));
        }
        ObjectNode times = log.putObject("stats");
        times.put("started_at", time(info.startedAt()));
        times.put("completed_at", time(info.finishedAt()));
        ObjectNode usage = InspectSamples.usage(figures.promptTokens(), figures.completionTokens());
        ObjectNode modelUsage = times.putObject("model_usage");
        if (figures.promptTokens() + figures.completionTokens() > 0) {
            modelUsage.set(model, usage);
        }
        ArrayNode samples = log.putArray("samples");
        for (SampleRow row : run.samples()) {
            if (row.model().equals(model)) {
                samples.add(InspectSamples.sample(row, manifest, scorer, info.startedAt()));
            }
        }
        if (scorer != null && figures.scored() > 0) {
            log.putArray("reductions").add(reductions(run, model, scorer));
        }
        return log;
    }

    /**
     * The log's file name as Inspect names its own: {@code <started>_<task>_<id>.json} (or
     * {@code .eval}), with the run id and the model in the id so that every model of every run has
     * its own file.
     */
    public static String fileName(RunData run, String model, LogFormat format) {
        Instant started = run.info().startedAt() == null ? Instant.EPOCH : run.info().startedAt();
        return TIME.format(started).replace(':', '-') + "_" + slug(task(run.info())) + "_"
                + slug(run.info().runId()) + "-" + slug(model) + format.extension();
    }

    /** The task name: the suite file's name without folder and extension ("suite" when unknown). */
    static String task(RunInfo info) {
        String suite = info.suite();
        if (suite == null || suite.isBlank()) {
            return "suite";
        }
        // By hand rather than Path: a recorded name need not be a valid path on this machine.
        String name = suite.substring(Math.max(suite.lastIndexOf('/'), suite.lastIndexOf('\\')) + 1);
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    private static ObjectNode spec(RunData run, String model) {
        RunInfo info = run.info();
        RunManifest manifest = info.manifest();
        ObjectNode spec = JSON.createObjectNode();
        spec.put("eval_id", info.runId() + "-" + slug(model));
        spec.put("run_id", info.runId());
        spec.put("created", time(info.startedAt() == null ? Instant.EPOCH : info.startedAt()));
        spec.put("task", task(info));
        spec.put("task_id", info.runId());
        spec.put("task_version", 0);
        if (info.suite() != null) {
            spec.put("task_file", info.suite());
        }
        spec.putObject("task_attribs");
        spec.putObject("task_args");
        spec.put("solver", "generate");
        ObjectNode dataset = spec.putObject("dataset");
        dataset.put("name", task(info));
        if (info.suite() != null) {
            dataset.put("location", info.suite());
        }
        dataset.put("samples", info.vignettes());
        Set<String> ids = new LinkedHashSet<>();
        run.samples().forEach(s -> ids.add(s.vignetteId()));
        ArrayNode sampleIds = dataset.putArray("sample_ids");
        ids.forEach(sampleIds::add);
        SuiteSubset subset = manifest == null ? null : manifest.subset();
        dataset.put("shuffled", subset != null && subset.shuffleSeed() != null);
        spec.put("model", model);
        spec.set("model_generate_config", generateConfig(manifest));
        spec.putObject("model_args");
        ObjectNode config = spec.putObject("config");
        config.put("epochs", info.epochs());
        config.putArray("epochs_reducer").add(REDUCER);
        if (subset != null) {
            // Inspect's own names for the subset options (EvalConfig: limit, sample_id, sample_shuffle).
            if (subset.limit() != null) {
                config.put("limit", subset.limit());
            }
            if (!subset.sampleIds().isEmpty()) {
                ArrayNode chosen = config.putArray("sample_id");
                subset.sampleIds().forEach(chosen::add);
            }
            if (subset.shuffleSeed() != null) {
                config.put("sample_shuffle", subset.shuffleSeed());
            }
        }
        if (manifest != null) {
            spec.putObject("packages").put("panoptes", manifest.toolVersion());
            ObjectNode metadata = spec.putObject("metadata");
            metadata.put("panoptes_run_id", info.runId());
            metadata.put("suite_sha256", manifest.suiteSha256());
            metadata.put("job_size", manifest.jobSize());
            metadata.put("label", manifest.label());
            if (manifest.fewShot() != null) {
                metadata.put("few_shot", manifest.fewShot());
            }
            if (subset != null) {
                metadata.put("subset", subset.describe());
            }
        } else {
            spec.putObject("packages");
            spec.putObject("metadata").put("panoptes_run_id", info.runId());
        }
        // Inspect's stats carry one start and end; a resumed run's sittings are kept beside them.
        if (!info.sittings().isEmpty()) {
            ObjectNode metadata = (ObjectNode) spec.get("metadata");
            ArrayNode sittings = metadata.putArray("sittings");
            for (RunSitting s : info.sittings()) {
                ObjectNode each = sittings.addObject();
                each.put("started_at", time(s.startedAt()));
                each.put("ended_at", time(s.endedAt()));
                each.put("end_noted", s.ended());
                each.put("answers_stored", s.answers());
            }
            metadata.put("duration_seconds", info.workedFor().toMillis() / 1000.0);
        }
        if (info.scorer() != null) {
            ObjectNode scorer = spec.putArray("scorers").addObject();
            scorer.put("name", info.scorer());
            ArrayNode metrics = scorer.putArray("metrics");
            metrics.addObject().put("name", "accuracy");
            metrics.addObject().put("name", "stderr");
        }
        return spec;
    }

    /** Inspect's {@code GenerateConfig} from the run's sampling parameters; empty without a manifest. */
    private static ObjectNode generateConfig(RunManifest manifest) {
        ObjectNode config = JSON.createObjectNode();
        if (manifest == null) {
            return config;
        }
        if (manifest.systemPrompt() != null) {
            config.put("system_message", manifest.systemPrompt());
        }
        if (manifest.temperature() != null) {
            config.put("temperature", manifest.temperature());
        }
        if (manifest.maxTokens() != null) {
            config.put("max_tokens", manifest.maxTokens());
        }
        if (manifest.seed() != null) {
            config.put("seed", manifest.seed());
        }
        return config;
    }

    private static ObjectNode results(RunStats.ModelStats figures, String scorer) {
        Estimate accuracy = figures.accuracy();
        ObjectNode results = JSON.createObjectNode();
        results.put("total_samples", figures.samples());
        results.put("completed_samples", figures.samples() - figures.failedAnswers());
        ObjectNode score = results.putArray("scores").addObject();
        score.put("name", scorer);
        score.put("scorer", scorer);
        score.put("reducer", REDUCER);
        score.put("scored_samples", figures.scored());
        score.put("unscored_samples", figures.unscored());
        score.putObject("params");
        ObjectNode metrics = score.putObject("metrics");
        metric(metrics, "accuracy", accuracy.mean());
        if (accuracy.hasStandardError()) {
            metric(metrics, "stderr", accuracy.standardError());
        }
        ObjectNode metadata = results.putObject("metadata");
        metadata.put("interval", "95% confidence interval, clustered by vignette");
        metadata.put("ci_low", accuracy.ciLow());
        metadata.put("ci_high", accuracy.ciHigh());
        metadata.put("clusters", accuracy.clusters());
        metadata.put("failed_answers", figures.failedAnswers());
        return results;
    }

    /**
     * Inspect's {@code EvalSampleReductions} for the scorer: per vignette (in the order of its
     * first answer), the mean of its epochs' figure scores (failed answers as 0, unscored answers
     * left out) with the answer (as its sample's score names it: a multiple-choice answer's letter)
     * and explanation of its first epoch; a vignette without a scored
     * answer has none.
     */
    private static ObjectNode reductions(RunData run, String model, String scorer) {
        Map<String, List<SampleRow>> byVignette = new LinkedHashMap<>();
        for (SampleRow row : run.samples()) {
            if (row.model().equals(model)) {
                byVignette.computeIfAbsent(row.vignetteId(), v -> new ArrayList<>()).add(row);
            }
        }
        ObjectNode reductions = JSON.createObjectNode();
        reductions.put("scorer", scorer);
        reductions.put("reducer", REDUCER);
        ArrayNode samples = reductions.putArray("samples");
        for (Map.Entry<String, List<SampleRow>> vignette : byVignette.entrySet()) {
            List<SampleRow> rows = vignette.getValue();
            rows.sort(Comparator.comparingInt(SampleRow::epoch));
            double sum = 0;
            int scored = 0;
            for (SampleRow row : rows) {
                if (row.figureScore() != null) {
                    sum += row.figureScore();
                    scored++;
                }
            }
            if (scored == 0) {
                continue;
            }
            ObjectNode reduced = samples.addObject();
            reduced.put("value", sum / scored);
            String answer = InspectSamples.scoreAnswer(rows.get(0), scorer);
            if (answer != null) {
                reduced.put("answer", answer);
            }
            reduced.put("explanation", "mean of " + scored + " scored of " + rows.size() + " epochs");
            reduced.put("sample_id", vignette.getKey());
        }
        return reductions;
    }

    private static void metric(ObjectNode metrics, String name, double value) {
        ObjectNode metric = metrics.putObject(name);
        metric.put("name", name);
        metric.put("value", value);
        metric.putObject("params");
    }

    /** What the viewer's list shows of a log, as {@value #LISTING} holds it. */
    private static ObjectNode listingEntry(ObjectNode log) {
        JsonNode spec = log.get("eval");
        ObjectNode entry = JSON.createObjectNode();
        for (String field : List.of("eval_id", "run_id", "task", "task_id", "task_version", "model")) {
            entry.set(field, spec.get(field));
        }
        entry.put("version", FORMAT_VERSION);
        entry.set("status", log.get("status"));
        entry.putNull("error");
        entry.set("started_at", log.get("stats").get("started_at"));
        entry.set("completed_at", log.get("stats").get("completed_at"));
        JsonNode scores = log.path("results").path("scores");
        if (scores.size() > 0) {
            ObjectNode primary = entry.putObject("primary_metric");
            primary.put("name", "accuracy");
            primary.set("value", scores.get(0).path("metrics").path("accuracy").get("value"));
        }
        return entry;
    }

    private static ObjectNode readListing(Path file) throws IOException {
        if (!Files.exists(file)) {
            return JSON.createObjectNode();
        }
        JsonNode listing = JSON.readTree(file.toFile());
        if (!(listing instanceof ObjectNode object)) {
            throw new IOException(file + " is not an Inspect log listing (a JSON object of log files)");
        }
        return object;
    }

    private static void writeAtomically(Path file, byte[] content) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(temporary, content);
        Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String time(Instant instant) {
        return instant == null ? "" : TIME.format(instant);
    }

    /** A name part without path separators or the underscores that separate the name's parts. */
    private static String slug(String text) {
        String slug = text.replaceAll("[^A-Za-z0-9.-]+", "-");
        return slug.isEmpty() ? "-" : slug;
    }
}
