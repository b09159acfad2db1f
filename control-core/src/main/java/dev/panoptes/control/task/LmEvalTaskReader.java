package dev.panoptes.control.task;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.suite.SuiteFormatException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads an lm-evaluation-harness task file ({@code lm_eval --tasks} YAML) and applies it to its
 * data, for {@code eval --task} and {@code coordinator --task}. What the file uses that Panoptes
 * cannot run (a {@code !function} hook, {@code process_docs}, a Hugging Face hub dataset without
 * a local file, a field it does not know, a metric or filter it does not compute) is refused
 * before anything runs: every such problem is listed with its file and line and what to do.
 *
 * <p>Data: {@code dataset_path: json} or {@code csv} with {@code dataset_kwargs.data_files} (a
 * file, a list, or split to file; relative to the task file's folder, else to the working
 * folder), or the files given beside the task ({@code --dataset-file}): under the key "" the
 * evaluation split's file, under a split's name that split's. The evaluation split is
 * {@code test_split}, else {@code validation_split}, as lm-eval's {@code eval_docs}.
 *
 * <p>Stateless and thread-safe.
 */
public final class LmEvalTaskReader {
    private static final ObjectMapper CANONICAL = new ObjectMapper()
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    /**
     * @param file         the task YAML
     * @param datasetFiles local data files: "" for the evaluation split, else by split name; may be empty
     * @throws SuiteFormatException when the task cannot run as written (every problem, with its place)
     * @throws IOException          when a file cannot be read
     */
    public LoadedTask read(Path file, Map<String, Path> datasetFiles) throws IOException, SuiteFormatException {
        List<String> problems = new ArrayList<>();
        TaskYaml yaml = TaskYaml.read(file, problems);
        if (yaml == null) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        TaskConfig config = TaskConfig.of(yaml, problems);
        Map<String, Path> splits = config == null ? Map.of() : dataFiles(file, yaml, config, datasetFiles, problems);
        if (!problems.isEmpty() || config == null) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        Map<String, List<Map<String, Object>>> docs = new LinkedHashMap<>();
        MessageDigest identity = sha256();
        identity.update(("panoptes lm-eval task 1\n" + canonical(yaml.values()) + "\n").getBytes(
                java.nio.charset.StandardCharsets.UTF_8));
        for (Map.Entry<String, Path> e : splits.entrySet()) {
            try {
                docs.put(e.getKey(), TaskDocs.read(e.getValue(), config.dataField()));
            } catch (IllegalArgumentException | IOException ex) {
                problems.add("data file " + e.getValue() + " (split " + e.getKey() + "): " + ex.getMessage());
                continue;
            }
            identity.update(("split " + e.getKey() + " sha256 " + fileSha256(e.getValue()) + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        return new TaskPrompts(config, new DocTemplates()).build(file, docs, identity, problems);
    }

    /** Which file holds each split the run reads: the evaluation split and, with few-shot, the examples'. */
    private static Map<String, Path> dataFiles(Path file, TaskYaml yaml, TaskConfig config,
                                               Map<String, Path> given, List<String> problems) {
        Map<String, Path> local = new LinkedHashMap<>();
        for (Map.Entry<String, Path> e : given.entrySet()) {
            local.put(e.getKey().isEmpty() ? config.evalSplit() : e.getKey(), e.getValue());
        }
        if (given.isEmpty()) {
            String path = config.datasetPath();
            if (path == null) {
                problems.add(yaml.where("task") + ": the task names no dataset_path; give its data with"
                        + " --dataset-file FILE");
                return Map.of();
            }
            if (!List.of("json", "csv").contains(path)) {
                problems.add(yaml.where("dataset_path") + ": dataset_path '" + path + "' is a Hugging Face hub"
                        + " dataset, which Panoptes does not download: give a local copy of its "
                        + config.evalSplit() + " split with --dataset-file FILE (JSON, JSONL or CSV)"
                        + (config.numFewshot() > 0 ? ", and of its " + config.fewshotSplit() + " split with"
                        + " --dataset-file " + config.fewshotSplit() + "=FILE" : ""));
                return Map.of();
            }
            Object dataFiles = config.dataFiles();
            if (dataFiles instanceof String s) {
                local.put("train", resolve(file, s));
            } else if (dataFiles instanceof List<?> l && !l.isEmpty()) {
                local.put("train", resolve(file, String.valueOf(l.get(0))));
            } else if (dataFiles instanceof Map<?, ?> m) {
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    Object v = e.getValue() instanceof List<?> l && !l.isEmpty() ? l.get(0) : e.getValue();
                    local.put(String.valueOf(e.getKey()), resolve(file, String.valueOf(v)));
                }
            } else {
                problems.add(yaml.where("dataset_kwargs") + ": dataset_path '" + path + "' needs"
                        + " dataset_kwargs.data_files (a file, or split: file), or give --dataset-file FILE");
                return Map.of();
            }
        }
        Map<String, Path> needed = new LinkedHashMap<>();
        need(needed, local, config.evalSplit(), "the evaluation split", yaml, problems);
        if (config.numFewshot() > 0 && !config.fewshotSplit().equals(config.evalSplit())) {
            need(needed, local, config.fewshotSplit(), "num_fewshot " + config.numFewshot() + " draws its examples"
                    + " from split", yaml, problems);
        }
        return needed;
    }

    private static void need(Map<String, Path> needed, Map<String, Path> local, String split, String why,
                             TaskYaml yaml, List<String> problems) {
        Path p = local.get(split);
        if (p == null) {
            problems.add(yaml.where("task") + ": " + why + " '" + split + "' has no data file: give it with"
                    + " --dataset-file " + split + "=FILE" + (local.isEmpty() ? "" : " (files given for "
                    + String.join(", ", local.keySet()) + ")"));
        } else if (!Files.isRegularFile(p)) {
            problems.add("data file of split '" + split + "': no such file " + p);
        } else {
            needed.put(split, p);
        }
    }

    private static Path resolve(Path taskFile, String name) {
        Path p = Path.of(name);
        if (p.isAbsolute()) {
            return p;
        }
        Path beside = taskFile.toAbsolutePath().getParent().resolve(name);
        return Files.exists(beside) ? beside : p;
    }

    /** The configuration after includes as JSON with sorted keys: the same task reads the same. */
    static String canonical(Map<String, Object> values) {
        try {
            return CANONICAL.writeValueAsString(new TreeMap<>(values));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a task's values are plain YAML values", e);
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static String fileSha256(Path file) throws IOException {
        MessageDigest d = sha256();
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), d)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(d.digest());
    }

    /** The sampling of a generation task's requests, for the run's parameters (null fields: the API's default). */
    public static SpecParams params(LoadedTask task) {
        return new SpecParams(null, task.temperature(), task.maxTokens(), null).withSampling(null,
                task.stop(), null);
    }
}
