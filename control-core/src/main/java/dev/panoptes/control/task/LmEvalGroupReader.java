package dev.panoptes.control.task;

import dev.panoptes.control.Vignette;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads an lm-evaluation-harness group file ({@code group: NAME}, {@code task: [...]}, optional
 * {@code aggregate_metric_list}) as one run: every task of the group read by
 * {@link LmEvalTaskReader}, their vignettes in one suite, each vignette's id {@code TASK/DOC} and
 * its metadata key {@value #TASK_KEY} the task's name, so that the run's breakdown by that key
 * gives the per-task figures. A file is a group file when its {@code task} is a list, as lm-eval tells. The group's identity is its configuration and every task's identity.
 *
 * <p>A task is named by its file ({@code arithmetic-task.yaml}, relative to the group file) or by
 * its {@code task:} name, looked up among the YAML files in the group file's folder and the folders
 * below it (lm-eval looks it up in its task index). What Panoptes cannot run is refused before
 * anything runs, with the file and line and what to do: an inline task configuration, a group
 * inside the group, an aggregation other than {@code mean}, a filter on an aggregate, tasks scored
 * or sampled differently from each other, and any group field it does not know.
 *
 * <p>Stateless and thread-safe.
 */
public final class LmEvalGroupReader {
    /** The metadata key that holds each vignette's task name: the run's group-by key. */
    public static final String TASK_KEY = "task";
    private static final Set<String> GROUP_FIELDS = Set.of("group", "group_alias", "task",
            "aggregate_metric_list", "metadata");
    private static final Set<String> AGGREGATE_FIELDS = Set.of("metric", "aggregation", "weight_by_size",
            "filter_list");
    private static final Pattern TASK_LINE = Pattern.compile("^task:\\s*[\"']?([^\"'#\\s]+)[\"']?\\s*(#.*)?$");

    /** An aggregate lm-eval reports for the group: a metric's mean over its tasks. */
    public record Aggregate(String metric, boolean weightBySize) {
        /** @throws NullPointerException when metric is null */
        public Aggregate {
            Objects.requireNonNull(metric, "metric");
        }
    }

    /**
     * A group read: the run it asks ({@code task}, named after the group, its suite every task's
     * vignettes), its tasks in the file's order, and the aggregates the file asks for.
     */
    public record Group(LoadedTask task, List<LoadedTask> tasks, List<Aggregate> aggregates) {
        /** Copies the lists. */
        public Group {
            tasks = List.copyOf(tasks);
            aggregates = List.copyOf(aggregates);
        }
    }

    /**
     * True when {@code file} is a group file: its top-level {@code task} is a list (lm-eval's own
     * test; a task file's {@code task} is its name). False for a file that is not a YAML mapping:
     * the task reader then says what is wrong with it.
     *
     * @throws IOException when it cannot be read
     */
    public static boolean isGroupFile(Path file) throws IOException {
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(50);
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            Node root = new Yaml(options).compose(reader);
            if (root instanceof MappingNode mapping) {
                for (NodeTuple t : mapping.getValue()) {
                    if (t.getKeyNode() instanceof ScalarNode key && "task".equals(key.getValue())) {
                        return t.getValueNode() instanceof SequenceNode;
                    }
                }
            }
            return false;
        } catch (YAMLException | java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    /**
     * @param file the group YAML
     * @throws SuiteFormatException when the group or one of its tasks cannot run as written
     *                              (every problem, with its place)
     * @throws IOException          when a file cannot be read
     */
    public Group read(Path file) throws IOException, SuiteFormatException {
        List<String> problems = new ArrayList<>();
        TaskYaml yaml = TaskYaml.read(file, problems);
        if (yaml == null) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        Map<String, Object> values = yaml.values();
        for (String key : values.keySet()) {
            if (!GROUP_FIELDS.contains(key)) {
                problems.add(yaml.where(key) + ": '" + key + "' is not a field of an lm-eval group file that Panoptes"
                        + " reads (group, group_alias, task, aggregate_metric_list, metadata): move it into the task"
                        + " files, or remove it");
            }
        }
        Object name = values.get("group");
        String groupName = name instanceof String n ? n : "";
        if (groupName.isBlank()) {
            problems.add(yaml.where("group") + ": group names the group (a plain name), got " + name);
        }
        List<Path> taskFiles = taskFiles(file, yaml, problems);
        List<Aggregate> aggregates = aggregates(yaml, problems);
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        List<LoadedTask> tasks = new ArrayList<>();
        for (Path t : taskFiles) {
            try {
                tasks.add(new LmEvalTaskReader().read(t, Map.of()));
            } catch (SuiteFormatException e) {
                for (String p : e.problems()) {
                    problems.add(t + ": " + p);
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        alike(yaml, tasks, aggregates, problems);
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        return new Group(combine(groupName, yaml, tasks, aggregates), tasks, aggregates);
    }

    /** The task files the group lists, each found; a problem for each that is not. */
    private static List<Path> taskFiles(Path file, TaskYaml yaml, List<String> problems) throws IOException {
        Object list = yaml.values().get("task");
        String where = yaml.where("task");
        if (!(list instanceof List<?> entries) || entries.isEmpty()) {
            problems.add(where + ": task lists the group's tasks (task names or task YAML files), got " + list);
            return List.of();
        }
        Path folder = file.toAbsolutePath().getParent();
        List<Path> files = new ArrayList<>();
        Map<String, Path> byName = null;
        for (int i = 0; i < entries.size(); i++) {
            Object e = entries.get(i);
            String entry = where + ", entry " + (i + 1);
            if (e instanceof Map<?, ?>) {
                problems.add(entry + ": an inline task configuration (a task with settings written in the group"
                        + " file) is not read: write those settings in a task YAML that includes the task's file"
                        + " (include: ...), and list that file here");
                continue;
            }
            if (!(e instanceof String ref) || ref.isBlank()) {
                problems.add(entry + ": a task name or a task YAML file, got " + e);
                continue;
            }
            Path found;
            if (ref.endsWith(".yaml") || ref.endsWith(".yml")) {
                found = folder.resolve(ref);
                if (!Files.isRegularFile(found)) {
                    problems.add(entry + ": no such task file " + found + " (a task file is read relative to the"
                            + " group file)");
                    continue;
                }
            } else {
                if (byName == null) {
                    byName = taskIndex(folder);
                }
                found = byName.get(ref);
                if (found == null) {
                    problems.add(entry + ": no task named '" + ref + "' in the YAML files under " + folder
                            + ": put its task file there, or list the file itself (" + ref + ".yaml)");
                    continue;
                }
            }
            if (isGroupFile(found)) {
                problems.add(entry + ": " + ref + " is a group, and a group inside a group is not read: list its"
                        + " tasks in this file");
                continue;
            }
            if (files.contains(found.normalize())) {
                problems.add(entry + ": " + ref + " is listed twice");
                continue;
            }
            files.add(found.normalize());
        }
        return files;
    }

    /** The task files under {@code folder} (three levels down) by their {@code task:} name. */
    private static Map<String, Path> taskIndex(Path folder) throws IOException {
        Map<String, Path> index = new LinkedHashMap<>();
        try (Stream<Path> walk = Files.walk(folder, 3)) {
            for (Path p : (Iterable<Path>) walk.sorted()::iterator) {
                String n = p.getFileName().toString();
                if (!Files.isRegularFile(p) || !(n.endsWith(".yaml") || n.endsWith(".yml"))) {
                    continue;
                }
                List<String> lines;
                try {
                    lines = Files.readAllLines(p, StandardCharsets.UTF_8);
                } catch (IOException e) {
                    continue;
                }
                for (String line : lines) {
                    Matcher m = TASK_LINE.matcher(line);
                    if (m.matches()) {
                        index.putIfAbsent(m.group(1), p);
                        break;
                    }
                }
            }
        }
        return index;
    }

    private static List<Aggregate> aggregates(TaskYaml yaml, List<String> problems) {
        Object list = yaml.values().get("aggregate_metric_list");
        if (list == null) {
            return List.of();
        }
        String where = yaml.where("aggregate_metric_list");
        List<?> entries = list instanceof List<?> l ? l : List.of(list);
        List<Aggregate> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            String entry = where + ", entry " + (i + 1);
            if (!(entries.get(i) instanceof Map<?, ?> m)) {
                problems.add(entry + ": an aggregate is a mapping (metric:, aggregation: mean, weight_by_size:),"
                        + " got " + entries.get(i));
                continue;
            }
            for (Object k : m.keySet()) {
                if (!AGGREGATE_FIELDS.contains(String.valueOf(k))) {
                    problems.add(entry + ": '" + k + "' is not read in an aggregate (metric, aggregation,"
                            + " weight_by_size): remove it");
                }
            }
            Object metric = m.get("metric");
            if (!(metric instanceof String metricName)
                    || !List.of("acc", "acc_norm", "exact_match").contains(metricName)) {
                problems.add(entry + ": metric " + metric + " is not one Panoptes computes over a group's tasks:"
                        + " give acc, acc_norm or exact_match" + ("perplexity".equals(metric) ? " (a group of"
                        + " loglikelihood tasks gets each task's perplexity in the run summary, with --group-by task,"
                        + " which a group file sets)" : ""));
                continue;
            }
            Object aggregation = m.get("aggregation");
            if (aggregation != null && !"mean".equals(aggregation)) {
                problems.add(entry + ": aggregation '" + aggregation + "' is not supported (lm-eval's groups"
                        + " aggregate by mean, a Python function otherwise): write aggregation: mean");
            }
            Object filter = m.get("filter_list");
            if (filter != null && !"none".equals(filter) && !List.of("none").equals(filter)) {
                problems.add(entry + ": filter_list " + filter + " is not read on an aggregate (each task's own"
                        + " filter is what its exact_match uses): remove it");
            }
            Object weight = m.get("weight_by_size");
            if (weight != null && !(weight instanceof Boolean)) {
                problems.add(entry + ": weight_by_size is true or false, got " + weight);
                continue;
            }
            out.add(new Aggregate(metricName, Boolean.TRUE.equals(weight)));
        }
        return out;
    }

    /** The tasks of one run are scored, repeated and sampled alike: the run has one of each. */
    private static void alike(TaskYaml yaml, List<LoadedTask> tasks, List<Aggregate> aggregates,
                              List<String> problems) {
        LoadedTask first = tasks.get(0);
        String where = yaml.where("task");
        Set<String> names = new java.util.HashSet<>();
        for (LoadedTask t : tasks) {
            if (!names.add(t.name())) {
                problems.add(where + ": two tasks are named '" + t.name() + "': give each task of a group its own"
                        + " task: name");
            }
            List<String> differs = new ArrayList<>();
            if (!Objects.equals(t.outputType(), first.outputType())) {
                differs.add("output_type " + t.outputType() + " (" + first.name() + ": " + first.outputType() + ")");
            }
            if (!Objects.equals(t.scorer(), first.scorer())) {
                differs.add("scoring " + t.scorer() + " (" + first.name() + ": " + first.scorer() + ")");
            }
            if (t.repeats() != first.repeats()) {
                differs.add("repeats " + t.repeats() + " (" + first.name() + ": " + first.repeats() + ")");
            }
            if (!Objects.equals(t.temperature(), first.temperature()) || !Objects.equals(t.maxTokens(),
                    first.maxTokens()) || !t.stop().equals(first.stop())) {
                differs.add("generation_kwargs (" + first.name() + "'s differ)");
            }
            if (!differs.isEmpty()) {
                problems.add(where + ": task " + t.name() + " differs from " + first.name() + " in "
                        + String.join(", ", differs) + ": the tasks of one run are scored and sampled alike; run"
                        + " the tasks that differ as a group of their own");
            }
        }
        for (Aggregate a : aggregates) {
            boolean choice = first.isMultipleChoice();
            if (first.isLoglikelihood() ? !"acc".equals(a.metric()) : choice == "exact_match".equals(a.metric())) {
                problems.add(yaml.where("aggregate_metric_list") + ": metric " + a.metric() + " is not one the"
                        + " group's " + first.outputType() + " tasks give (" + (choice ? "acc, acc_norm"
                        : first.isLoglikelihood() ? "acc; perplexity is not aggregated over a group's tasks"
                        : "exact_match") + ")");
            }
        }
    }

    private static LoadedTask combine(String groupName, TaskYaml yaml, List<LoadedTask> tasks,
                                      List<Aggregate> aggregates) {
        MessageDigest identity = LmEvalTaskReader.sha256();
        identity.update(("panoptes lm-eval group 1\n" + LmEvalTaskReader.canonical(yaml.values()) + "\n")
                .getBytes(StandardCharsets.UTF_8));
        List<Vignette> vignettes = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (LoadedTask t : tasks) {
            identity.update(("task " + t.name() + " " + t.suite().sha256() + "\n").getBytes(StandardCharsets.UTF_8));
            for (Vignette v : t.suite().vignettes()) {
                Map<String, Object> metadata = new LinkedHashMap<>(v.metadata());
                // The task's name wins over a document field of the same name: it is the group-by key.
                metadata.put(TASK_KEY, t.name());
                vignettes.add(new Vignette(t.name() + "/" + v.id(), v.prompt(), v.expected(), metadata,
                        v.messages(), v.scorer(), v.choices(), v.sandbox()));
            }
            for (String n : t.suite().notes()) {
                notes.add(t.name() + ": " + n);
            }
        }
        List<String> sizes = new ArrayList<>();
        for (LoadedTask t : tasks) {
            sizes.add(t.name() + " (" + t.suite().vignettes().size() + " documents)");
        }
        notes.add(0, "group " + groupName + ": " + String.join(", ", sizes) + "; figures per task under "
                + TASK_KEY + "=NAME");
        for (Aggregate a : aggregates) {
            notes.add("group " + groupName + " aggregates " + a.metric() + " as lm-eval does, "
                    + (a.weightBySize() ? "weighted by size: the run's " + a.metric() + " over every document"
                    : "each task counted once: the mean of the tasks' " + a.metric()));
        }
        LoadedTask first = tasks.get(0);
        Suite suite = new Suite(groupName, vignettes, HexFormat.of().formatHex(identity.digest()), List.of(), notes);
        return new LoadedTask(groupName, first.outputType(), suite, first.scorer(), first.temperature(),
                first.maxTokens(), first.stop(), first.repeats(), first.metrics());
    }
}
