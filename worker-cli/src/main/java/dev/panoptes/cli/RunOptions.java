package dev.panoptes.cli;

import dev.panoptes.console.Durations;
import dev.panoptes.control.ExtraBody;
import dev.panoptes.control.ModelSource;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.task.LmEvalGroupReader;
import dev.panoptes.control.task.LmEvalTaskReader;
import dev.panoptes.control.task.LoadedTask;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.coordinator.DatabaseTarget;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * What a run is and where it goes, as {@code coordinator} and {@code eval} both take it: the suite,
 * the models, the scorer, epochs, sampling parameters, the database, job size, attempts and the
 * error rate allowed. The options of the fleet (listening, tokens, heartbeats, TLS) stay with the
 * coordinator command. Filled in by picocli; read on the command's thread.
 */
final class RunOptions {
    @Option(names = "--suite", order = 20, paramLabel = "FILE",
            description = "The suite to run: JSONL, or CSV with a header row (see below). This or --task is required.")
    Path suite;

    @Option(names = "--task", order = 20, paramLabel = "FILE.yaml",
            description = "An lm-evaluation-harness task file, or a group file (group: NAME, task: [...]: its tasks"
                    + " run as one run, with figures per task and the group's aggregates), to run instead of a"
                    + " suite: multiple_choice (scored by"
                    + " log-likelihood: acc, acc_norm), loglikelihood (one continuation per document: perplexity,"
                    + " acc as is_greedy) or generate_until (exact_match); its data from local JSON,"
                    + " JSONL or CSV files (dataset_kwargs.data_files, or --dataset-file). What Panoptes cannot run"
                    + " (!function, process_docs, a hub dataset without a local file) is refused before anything runs.")
    Path task;

    @Option(names = "--dataset-file", order = 21, paramLabel = "[SPLIT=]FILE",
            description = "With --task: a local copy of the task's data. FILE is its evaluation split (test_split,"
                    + " else validation_split); SPLIT=FILE gives another split (the few-shot examples' split)."
                    + " Repeatable.")
    List<String> datasetFiles = new ArrayList<>();

    @Option(names = "--model", order = 22, paramLabel = "NAME", required = true,
            description = "A model to evaluate; repeat to compare several in one run (the suite is asked of each)."
                    + " Each job goes only to a worker whose model API serves its model. Required.")
    List<String> models = new ArrayList<>();

    @Option(names = "--scorer", order = 24, paramLabel = "SCORER", defaultValue = "exact",
            description = "How answers are scored against \"expected\": exact, normalized (case, punctuation,"
                    + " articles, spaces), includes, regex:PATTERN (its first group against expected), numeric"
                    + " [numeric:TOL or numeric:TOL%%], choice (the letter chosen), judge:MODEL (a judge model grades"
                    + " with a rubric, on workers that serve MODEL). A vignette's own \"scorer\" overrides it."
                    + " Default: ${DEFAULT-VALUE}.")
    String scorer;

    @Option(names = "--epochs", order = 26, paramLabel = "N", defaultValue = "1",
            description = "Ask each vignette N times (with seeds 0..N-1 added to --seed); the summary's confidence"
                    + " intervals then cluster by vignette. Default: ${DEFAULT-VALUE}.")
    int epochs;

    @Option(names = "--few-shot", order = 28, paramLabel = "FILE",
            description = "JSONL of {\"input\": ..., \"answer\": ...} examples, put before every prompt as chat turns.")
    Path fewShot;

    @Option(names = "--group-by", order = 29, paramLabel = "KEY",
            description = "Also report accuracy per value of this metadata key. The run records it: report and"
                    + " runs show use it, and a resume without it keeps it.")
    String groupBy;

    @Option(names = "--db", order = 30, paramLabel = "FILE|URL", defaultValue = "panoptes.db",
            description = "Where results go: a SQLite file, created when missing, or a PostgreSQL database shared"
                    + " by several coordinators, postgresql://[user@]host[:port]/dbname[?params] (its tables are"
                    + " created when missing). Default: ${DEFAULT-VALUE}.")
    String db;

    @Option(names = "--db-password-file", order = 31, paramLabel = "FILE",
            description = "A file whose first line is the PostgreSQL password. Default: the "
                    + DatabaseTarget.PASSWORD_ENV + " or " + DatabaseTarget.PG_PASSWORD_ENV + " environment"
                    + " variable. Never on the command line; never printed.")
    Path dbPasswordFile;

    @Option(names = "--job-size", order = 40, paramLabel = "N", defaultValue = "8",
            description = "Vignettes per job. Default: ${DEFAULT-VALUE}.")
    int jobSize;

    @Option(names = "--system", order = 60, paramLabel = "TEXT", description = "A system message for every prompt. A vignette whose chat starts with a"
            + " system message of its own gets one system message: this text, a blank line, then the vignette's"
            + " (never two system messages, which strict chat templates refuse).")
    String system;

    @Option(names = "--temperature", order = 70, paramLabel = "T", description = "Sampling temperature, 0 to 2.")
    Double temperature;

    @Option(names = "--max-tokens", order = 80, paramLabel = "N", description = "The most tokens per answer.")
    Integer maxTokens;

    @Option(names = "--seed", order = 90, paramLabel = "N", description = "A sampling seed, for APIs that take one.")
    Long seed;

    @Option(names = "--top-p", order = 91, paramLabel = "P",
            description = "Nucleus sampling's top_p, above 0 and at most 1. Default: the API's.")
    Double topP;

    @Option(names = "--stop", order = 92, paramLabel = "TEXT",
            description = "A stop sequence: the model stops before it; repeat for up to "
                    + SpecParams.MAX_STOP + " (Java escapes such as \\n are read as the character).")
    List<String> stop = new ArrayList<>();

    @Option(names = "--request-field", order = 93, paramLabel = "NAME=VALUE",
            description = "A further field of every request body, for options the server understands"
                    + " (min_p=0.05, repetition_penalty=1.1, chat_template_kwargs={\"enable_thinking\":false});"
                    + " VALUE is JSON when it reads as JSON, else a string. Repeatable. Part of the run's id and"
                    + " of the response cache's key.")
    List<String> requestFields = new ArrayList<>();

    @Option(names = "--model-id", order = 94, paramLabel = "NAME",
            description = "Names the model server that answers, for the run's id and the response cache: answers"
                    + " are shared only between runs that name the same model server. Default for eval: its"
                    + " --model-api URL; for coordinator: unknown, so nothing is served from the cache. Give"
                    + " the same NAME to a fleet of identical servers behind different URLs so that they share"
                    + " answers; give a new NAME when the weights behind a URL change.")
    String modelId;

    @Option(names = "--run-label", order = 95, paramLabel = "TEXT", defaultValue = "",
            description = "Mixed into the run's id: a new label starts the suite afresh in the same --db"
                    + " (for example the model's name).")
    String runLabel;

    @Option(names = "--max-attempts", order = 100, paramLabel = "N", defaultValue = "3",
            description = "Dispatches of a job before it is reported failed. Default: ${DEFAULT-VALUE}.")
    int maxAttempts;

    @Option(names = "--max-error-rate", order = 105, paramLabel = "R", defaultValue = "0",
            converter = ShareConverter.class,
            description = "A vignette the model API refuses for what it holds (HTTP 400 such as"
                    + " context_length_exceeded, 413, 422, a content filter) is stored as a failed answer with the"
                    + " API's error, and its neighbours are still asked. Exit 5 when failed answers are more than"
                    + " this share (0 to 1, or a percentage such as 5%%) of the answers stored; 0 for any. Default: ${DEFAULT-VALUE}.")
    double maxErrorRate;

    @Option(names = "--job-timeout", order = 135, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long one attempt of a job may take before it is cancelled on its worker and sent"
                    + " to another. Default: --job-size x 5m (the model client's budget for one model call,"
                    + " retries included).")
    Duration jobTimeout;

    /** Set by {@link #settings}: where results go, with the PostgreSQL password when there is one. */
    DatabaseTarget database;

    /**
     * Checks these options and makes the run's settings with the fleet's parts given.
     *
     * @param token    the workers' token, or null
     * @param endpoint the model API the run's one worker asks (eval), or null when the workers each
     *                 ask their own (coordinator)
     * @throws ParameterException when an option is invalid (exit 2), naming it
     */
    CoordinatorSettings settings(CommandSpec spec, Map<String, String> env, InetSocketAddress listen, String token,
                                 Duration waitForWorkers, Duration heartbeatInterval, Duration heartbeatTimeout,
                                 URI endpoint) {
        if ((suite == null) == (task == null)) {
            throw CliErrors.invalid(spec, suite == null ? "--suite" : "--task", suite == null
                    ? "give the suite to run (--suite FILE) or an lm-eval task file (--task FILE.yaml)"
                    : "give --suite or --task, not both");
        }
        LoadedTask loaded = task == null ? null : loadTask(spec);
        if (suite != null && !Files.isRegularFile(suite)) {
            throw CliErrors.invalid(spec, "--suite", "no such file: " + suite);
        }
        if (loaded != null) {
            taskDefaults(spec, loaded);
        }
        if (epochs < 1) {
            throw CliErrors.invalid(spec, "--epochs", "must be at least 1, got " + epochs);
        }
        for (String m : models) {
            if (m.isBlank()) {
                throw CliErrors.invalid(spec, "--model", "must not be empty");
            }
        }
        if (new HashSet<>(models).size() != models.size()) {
            throw CliErrors.invalid(spec, "--model", "each model once, got " + models);
        }
        try {
            RunScoring.check(scorer);
        } catch (IllegalArgumentException e) {
            throw CliErrors.invalid(spec, "--scorer", e.getMessage());
        }
        if (Scorers.isJudge(scorer) && RunScoring.judgeModel(scorer) == null) {
            throw CliErrors.invalid(spec, "--scorer", "name the judge model, as in judge:gpt-4o (any model some worker serves)");
        }
        if (fewShot != null && !Files.isRegularFile(fewShot)) {
            throw CliErrors.invalid(spec, "--few-shot", "no such file: " + fewShot);
        }
        if (jobSize < 1) {
            throw CliErrors.invalid(spec, "--job-size", "must be at least 1, got " + jobSize);
        }
        if (maxAttempts < 1) {
            throw CliErrors.invalid(spec, "--max-attempts", "must be at least 1, got " + maxAttempts);
        }
        if (temperature != null && (temperature < 0 || temperature > 2)) {
            throw CliErrors.invalid(spec, "--temperature", "must be between 0 and 2, got " + temperature);
        }
        if (maxTokens != null && maxTokens < 1) {
            throw CliErrors.invalid(spec, "--max-tokens", "must be at least 1, got " + maxTokens);
        }
        if (topP != null && (topP.isNaN() || topP <= 0 || topP > 1)) {
            throw CliErrors.invalid(spec, "--top-p", "must be above 0 and at most 1, got " + topP);
        }
        List<String> stops = new ArrayList<>();
        for (String s : stop) {
            String unescaped = unescape(s);
            if (unescaped.isEmpty()) {
                throw CliErrors.invalid(spec, "--stop", "a stop sequence must not be empty");
            }
            stops.add(unescaped);
        }
        if (loaded != null && stops.isEmpty()) {
            // The task's until, as written: no escapes to read.
            stops.addAll(loaded.stop());
        }
        if (stops.size() > SpecParams.MAX_STOP) {
            throw CliErrors.invalid(spec, "--stop", "at most " + SpecParams.MAX_STOP + " stop sequences (the"
                    + " OpenAI API's limit), got " + stops.size());
        }
        String extraBody;
        try {
            extraBody = ExtraBody.of(requestFields);
        } catch (IllegalArgumentException e) {
            throw CliErrors.invalid(spec, "--request-field", e.getMessage());
        }
        if (modelId != null && modelId.isBlank()) {
            throw CliErrors.invalid(spec, "--model-id", "must not be empty (leave it out for the default)");
        }
        if (jobTimeout != null && jobTimeout.toMillis() < 1) {
            throw CliErrors.invalid(spec, "--job-timeout", "must be at least 1ms, got " + Durations.format(jobTimeout));
        }
        database = CoordinatorCommand.database(spec, db, dbPasswordFile, env);
        if (database instanceof DatabaseTarget.Sqlite sqlite) {
            Path parent = sqlite.file().toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                throw CliErrors.invalid(spec, "--db", "the folder " + parent + " does not exist");
            }
        }
        return new CoordinatorSettings(listen, suite != null ? suite : task, database.settingsPath(), jobSize, runLabel,
                token, new SpecParams(system, temperature, maxTokens, seed).withSampling(topP, stops, extraBody)
                        .withModelSource(modelSource(endpoint)), maxAttempts, waitForWorkers, heartbeatInterval,
                heartbeatTimeout, jobTimeout, models, scorer, epochs, fewShot, groupBy, loaded);
    }

    /** Reads --task with its --dataset-file copies; every problem of the file is a usage error (exit 2). */
    private LoadedTask loadTask(CommandSpec spec) {
        if (!Files.isRegularFile(task)) {
            throw CliErrors.invalid(spec, "--task", "no such file: " + task);
        }
        Map<String, Path> files = new java.util.LinkedHashMap<>();
        for (String d : datasetFiles) {
            int eq = d.indexOf('=');
            String split = eq > 0 && !Files.exists(Path.of(d)) ? d.substring(0, eq) : "";
            Path file = Path.of(split.isEmpty() ? d : d.substring(eq + 1));
            if (!Files.isRegularFile(file)) {
                throw CliErrors.invalid(spec, "--dataset-file", "no such file: " + file);
            }
            if (files.put(split, file) != null) {
                throw CliErrors.invalid(spec, "--dataset-file", (split.isEmpty() ? "the evaluation split" : "split "
                        + split) + " is given twice");
            }
        }
        try {
            if (LmEvalGroupReader.isGroupFile(task)) {
                if (!files.isEmpty()) {
                    throw CliErrors.invalid(spec, "--dataset-file", "a group file's tasks name their own data"
                            + " files (dataset_kwargs.data_files in each task's YAML); leave --dataset-file out");
                }
                if (groupBy != null && !groupBy.equals(LmEvalGroupReader.TASK_KEY)) {
                    throw CliErrors.invalid(spec, "--group-by", "a group file's run is broken down by "
                            + LmEvalGroupReader.TASK_KEY + " (its per-task figures); leave --group-by out");
                }
                groupBy = LmEvalGroupReader.TASK_KEY;
                return new LmEvalGroupReader().read(task).task();
            }
            return new LmEvalTaskReader().read(task, files);
        } catch (SuiteFormatException e) {
            throw CliErrors.invalid(spec, "--task", e.getMessage());
        } catch (java.io.IOException e) {
            throw CliErrors.invalid(spec, "--task", "cannot read it: " + e.getMessage());
        }
    }

    /**
     * The task decides its scoring, repeats and generation parameters; the command line may set
     * the parameters (they win), not the scorer.
     */
    private void taskDefaults(CommandSpec spec, LoadedTask loaded) {
        var parsed = spec.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption("--scorer")) {
            throw CliErrors.invalid(spec, "--scorer", "a task file's metric_list decides its scoring ("
                    + loaded.scorer() + "); leave --scorer out with --task");
        }
        if (fewShot != null) {
            throw CliErrors.invalid(spec, "--few-shot", "a task file's num_fewshot decides its examples; leave"
                    + " --few-shot out with --task");
        }
        scorer = loaded.scorer();
        if (parsed == null || !parsed.hasMatchedOption("--epochs")) {
            epochs = loaded.repeats();
        }
        if (temperature == null) {
            temperature = loaded.temperature();
        }
        if (maxTokens == null) {
            maxTokens = loaded.maxTokens();
        }
    }

    /**
     * What identifies the model server that answers (see {@link ModelSource}): {@code --model-id}
     * when given, else the endpoint when the run has one, else null (unknown).
     */
    private String modelSource(URI endpoint) {
        if (modelId != null) {
            return ModelSource.named(modelId);
        }
        return endpoint == null ? null : ModelSource.endpoint(endpoint);
    }

    /** A stop sequence as typed: \\n, \\t, \\r and \\\\ read as the characters they name. */
    static String unescape(String typed) {
        StringBuilder b = new StringBuilder(typed.length());
        for (int i = 0; i < typed.length(); i++) {
            char c = typed.charAt(i);
            if (c == '\\' && i + 1 < typed.length()) {
                char n = typed.charAt(i + 1);
                switch (n) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case '\\' -> b.append('\\');
                    default -> {
                        b.append(c);
                        continue;
                    }
                }
                i++;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
