package dev.panoptes.control.task;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The fields of an lm-eval task file that decide prompts and scores, checked, with lm-eval's
 * defaults ({@code TaskConfig}: target delimiter " ", few-shot delimiter "\n\n", output type
 * {@code generate_until}, greedy generation until the few-shot delimiter, at most 256 tokens).
 *
 * @param fewshotSplitField the {@code fewshot_split} as written (null when absent), which decides
 *                          whether lm-eval's sampler leaves the evaluated document out
 * @param filter            the {@code regex} filter's options, or null for none
 * @param exactMatch        the {@code exact_match} options, or null when the task has no such metric
 */
record TaskConfig(String name, String datasetPath, Object dataFiles, String dataField, String trainingSplit,
                  String validationSplit, String testSplit, String fewshotSplitField, String outputType,
                  Object docToText, Object docToTarget, Object docToChoice, String targetDelimiter,
                  String fewshotDelimiter, int numFewshot, String description, List<String> until,
                  Integer maxGenToks, Double temperature, Map<String, Object> filter, List<String> metrics,
                  Map<String, Object> exactMatch, int repeats) {

    /** The split whose documents are asked: test, else validation. */
    String evalSplit() {
        return testSplit != null ? testSplit : validationSplit;
    }

    /** The split few-shot examples come from: fewshot_split, else training, validation, test (lm-eval's order). */
    String fewshotSplit() {
        if (fewshotSplitField != null) {
            return fewshotSplitField;
        }
        return trainingSplit != null ? trainingSplit : validationSplit != null ? validationSplit : testSplit;
    }

    /** lm-eval passes the evaluated document to the sampler (to leave it out) only when fewshot_split is test_split. */
    boolean samplerSkipsEvalDoc() {
        return Objects.equals(fewshotSplitField, testSplit);
    }

    boolean isMultipleChoice() {
        return "multiple_choice".equals(outputType);
    }

    /** lm-eval's loglikelihood: one continuation per document, its log-likelihood and greedy flag the figures. */
    boolean isLoglikelihood() {
        return "loglikelihood".equals(outputType);
    }

    /** The task's fields checked; null with problems added when it cannot run. */
    static TaskConfig of(TaskYaml yaml, List<String> problems) {
        Map<String, Object> v = yaml.values();
        int before = problems.size();
        for (String key : v.keySet()) {
            if (TaskFields.REFUSED.containsKey(key)) {
                if (v.get(key) != null && !(key.equals("unsafe_code") && Boolean.FALSE.equals(v.get(key)))) {
                    problems.add(yaml.where(key) + ": " + key + " is not supported: " + TaskFields.REFUSED.get(key));
                }
            } else if (!TaskFields.READ.contains(key) && !TaskFields.DESCRIPTIVE.contains(key)) {
                problems.add(yaml.where(key) + ": unknown field '" + key + "': Panoptes does not know what it does,"
                        + " so it refuses the task rather than run it differently from lm-eval; fields read: "
                        + String.join(", ", new java.util.TreeSet<>(TaskFields.READ)));
            }
        }
        String name = string(v, "task", yaml, problems);
        if (name == null) {
            problems.add(yaml.where("task") + ": the task has no name (task: NAME)");
        }
        String outputType = v.containsKey("output_type") ? string(v, "output_type", yaml, problems) : "generate_until";
        if (outputType != null && !List.of("multiple_choice", "generate_until", "loglikelihood").contains(outputType)) {
            problems.add(yaml.where("output_type") + ": output_type " + outputType + " is not supported: Panoptes runs"
                    + " multiple_choice (log-likelihood of each choice: acc, acc_norm), loglikelihood (of one"
                    + " continuation: perplexity, acc) and generate_until (exact_match)"
                    + ("loglikelihood_rolling".equals(outputType) ? "; loglikelihood_rolling (word_perplexity,"
                    + " byte_perplexity, bits_per_byte over whole documents, in rolling windows of the model's"
                    + " context) is not computed: run it with lm-eval's local-completions model against the same"
                    + " server" : ""));
        }
        boolean mc = "multiple_choice".equals(outputType);
        // Asked by log-likelihood: multiple choice (a request per choice) or loglikelihood (one
        // continuation per document); neither generates text.
        boolean ll = mc || "loglikelihood".equals(outputType);
        Map<String, Object> kwargs = map(v, "dataset_kwargs", yaml, problems);
        Object dataFiles = kwargs == null ? null : kwargs.get("data_files");
        String dataField = kwargs == null || !(kwargs.get("field") instanceof String f) ? null : f;
        String test = string(v, "test_split", yaml, problems);
        String validation = string(v, "validation_split", yaml, problems);
        if (test == null && validation == null) {
            problems.add(yaml.where("task") + ": the task has neither test_split nor validation_split: name the"
                    + " split to evaluate");
        }
        Object docToText = v.get("doc_to_text");
        Object docToTarget = v.get("doc_to_target");
        Object docToChoice = v.get("doc_to_choice");
        if (docToText == null && !v.containsKey("doc_to_text")) {
            problems.add(yaml.where("task") + ": the task has no doc_to_text");
        }
        if (docToTarget == null && !v.containsKey("doc_to_target")) {
            problems.add(yaml.where("task") + ": the task has no doc_to_target");
        }
        if (mc && docToChoice == null) {
            problems.add(yaml.where("output_type") + ": a multiple_choice task needs doc_to_choice");
        }
        if (docToChoice instanceof Map<?, ?> m) {
            docToChoice = new ArrayList<>(m.values());
        }
        String targetDelimiter = v.containsKey("target_delimiter") ? text(v, "target_delimiter", yaml, problems) : " ";
        String fewshotDelimiter = v.containsKey("fewshot_delimiter")
                ? text(v, "fewshot_delimiter", yaml, problems) : "\n\n";
        int numFewshot = whole(v, "num_fewshot", 0, yaml, problems);
        int repeats = whole(v, "repeats", 1, yaml, problems);
        if (repeats < 1) {
            problems.add(yaml.where("repeats") + ": repeats must be at least 1");
        }
        String description = v.get("description") == null ? "" : String.valueOf(v.get("description"));
        // Generation.
        List<String> until = new ArrayList<>();
        Integer maxGenToks = null;
        Double temperature = null;
        if (!ll) {
            Map<String, Object> gen = map(v, "generation_kwargs", yaml, problems);
            until.add(fewshotDelimiter);
            maxGenToks = 256;
            temperature = 0.0;
            if (gen != null) {
                for (String k : gen.keySet()) {
                    if (!TaskFields.GENERATION_KWARGS.contains(k)) {
                        problems.add(yaml.where("generation_kwargs") + ": generation_kwargs." + k + " is not"
                                + " supported (until, max_gen_toks, temperature and do_sample are)");
                    }
                }
                if (gen.containsKey("until")) {
                    until.clear();
                    Object u = gen.get("until");
                    for (Object s : u instanceof List<?> l ? l : List.of(u)) {
                        if (s != null && !String.valueOf(s).isEmpty()) {
                            until.add(String.valueOf(s));
                        }
                    }
                }
                if (gen.get("max_gen_toks") instanceof Number n) {
                    maxGenToks = n.intValue();
                }
                boolean doSample = Boolean.TRUE.equals(gen.get("do_sample"));
                if (gen.get("temperature") instanceof Number n) {
                    temperature = n.doubleValue();
                } else if (doSample) {
                    temperature = null;
                }
            }
            if (until.size() > 4) {
                problems.add(yaml.where("generation_kwargs") + ": generation_kwargs.until has " + until.size()
                        + " stop sequences; OpenAI-compatible APIs take at most 4: keep the 4 that matter");
            }
        } else {
            // A log-likelihood request is sent at temperature 0 (it samples nothing): the run's
            // parameters say so, and the response cache, which keys requests by the temperature,
            // keeps these answers as the deterministic ones they are.
            temperature = 0.0;
        }
        if (ll && v.get("generation_kwargs") != null) {
            problems.add(yaml.where("generation_kwargs") + ": generation_kwargs is for generate_until tasks; a"
                    + " " + outputType + " task generates nothing: remove it");
        }
        Map<String, Object> filter = filter(v, ll, yaml, problems);
        List<String> metrics = new ArrayList<>();
        Map<String, Object> exactMatch = null;
        Object metricList = v.get("metric_list");
        if (metricList == null) {
            // lm-eval's defaults per output type (DEFAULT_METRIC_REGISTRY).
            metrics.addAll(mc ? List.of("acc", "acc_norm") : ll ? TaskFields.LOGLIKELIHOOD_METRICS
                    : List.of("exact_match"));
            exactMatch = ll ? null : new LinkedHashMap<>();
        } else if (!(metricList instanceof List<?> list)) {
            problems.add(yaml.where("metric_list") + ": metric_list is a list of {metric: NAME, ...}");
        } else {
            for (Object o : list) {
                if (!(o instanceof Map<?, ?> m) || !(m.get("metric") instanceof String metric)) {
                    problems.add(yaml.where("metric_list") + ": each metric_list entry is {metric: NAME, ...}");
                    continue;
                }
                if (mc && TaskFields.CHOICE_METRICS.contains(metric)) {
                    metrics.add(metric);
                } else if (ll && !mc && TaskFields.LOGLIKELIHOOD_METRICS.contains(metric)) {
                    // lm-eval's aggregations for these: perplexity is exp(-mean ll), acc the mean.
                    String aggregation = metric.equals("perplexity") ? "perplexity" : "mean";
                    if (m.get("aggregation") != null && !aggregation.equals(m.get("aggregation"))) {
                        problems.add(yaml.where("metric_list") + ": aggregation " + m.get("aggregation") + " of "
                                + metric + " is not supported (" + aggregation + " is)");
                    }
                    for (Object k : m.keySet()) {
                        if (!TaskFields.METRIC_META.contains(String.valueOf(k))) {
                            problems.add(yaml.where("metric_list") + ": " + metric + " option " + k + " is not"
                                    + " supported (" + metric + " takes none)");
                        }
                    }
                    metrics.add(metric);
                } else if (!ll && metric.equals("exact_match")) {
                    metrics.add(metric);
                    exactMatch = new LinkedHashMap<>();
                    for (Map.Entry<?, ?> e : m.entrySet()) {
                        String k = String.valueOf(e.getKey());
                        if (TaskFields.EXACT_MATCH_OPTIONS.contains(k)) {
                            exactMatch.put(k, e.getValue());
                        } else if (!TaskFields.METRIC_META.contains(k)) {
                            problems.add(yaml.where("metric_list") + ": exact_match option " + k + " is not"
                                    + " supported (ignore_case, ignore_punctuation, ignore_numbers and"
                                    + " regexes_to_ignore are)");
                        }
                    }
                    if (m.get("aggregation") != null && !"mean".equals(m.get("aggregation"))) {
                        problems.add(yaml.where("metric_list") + ": aggregation " + m.get("aggregation")
                                + " is not supported (mean is)");
                    }
                } else {
                    problems.add(yaml.where("metric_list") + ": metric " + metric + " is not supported for "
                            + outputType + " (" + (mc ? "acc and acc_norm are" : ll ? "perplexity and acc are"
                            : "exact_match is") + ")");
                }
            }
        }
        if (problems.size() > before) {
            return null;
        }
        return new TaskConfig(name, string(v, "dataset_path", yaml, problems), dataFiles, dataField,
                string(v, "training_split", yaml, problems), validation, test,
                string(v, "fewshot_split", yaml, problems), outputType, docToText, docToTarget, docToChoice,
                targetDelimiter, fewshotDelimiter, numFewshot, description, until, maxGenToks, temperature, filter,
                metrics, exactMatch, repeats);
    }

    /** The first filter pipeline's regex step (take_first is what one answer per epoch does anyway). */
    private static Map<String, Object> filter(Map<String, Object> v, boolean ll, TaskYaml yaml, List<String> problems) {
        Object list = v.get("filter_list");
        if (list == null) {
            return null;
        }
        if (ll) {
            problems.add(yaml.where("filter_list") + ": filter_list is for generate_until tasks; remove it");
            return null;
        }
        if (!(list instanceof List<?> pipelines) || pipelines.isEmpty()) {
            problems.add(yaml.where("filter_list") + ": filter_list is a list of {name, filter: [...]}");
            return null;
        }
        if (pipelines.size() > 1) {
            problems.add(yaml.where("filter_list") + ": filter_list has " + pipelines.size() + " pipelines; Panoptes"
                    + " scores one: keep the one whose figures you want");
            return null;
        }
        Map<String, Object> regex = null;
        Object steps = pipelines.get(0) instanceof Map<?, ?> p ? p.get("filter") : null;
        if (!(steps instanceof List<?> stepList)) {
            problems.add(yaml.where("filter_list") + ": a filter pipeline is {name, filter: [{function: ...}]}");
            return null;
        }
        for (Object s : stepList) {
            Object function = s instanceof Map<?, ?> m ? m.get("function") : null;
            if (!TaskFields.FILTERS.contains(String.valueOf(function))) {
                problems.add(yaml.where("filter_list") + ": filter function " + function + " is not supported"
                        + " (regex and take_first are)");
            } else if ("regex".equals(function)) {
                if (regex != null) {
                    problems.add(yaml.where("filter_list") + ": one regex filter per pipeline is supported");
                }
                regex = new LinkedHashMap<>();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) s).entrySet()) {
                    if (!"function".equals(e.getKey())) {
                        regex.put(String.valueOf(e.getKey()), e.getValue());
                    }
                }
            }
        }
        return regex;
    }

    private static String string(Map<String, Object> v, String key, TaskYaml yaml, List<String> problems) {
        Object o = v.get(key);
        if (o == null) {
            return null;
        }
        if (o instanceof Map || o instanceof List) {
            problems.add(yaml.where(key) + ": " + key + " is a single value");
            return null;
        }
        return String.valueOf(o);
    }

    private static String text(Map<String, Object> v, String key, TaskYaml yaml, List<String> problems) {
        String s = string(v, key, yaml, problems);
        return s == null ? "" : s;
    }

    private static int whole(Map<String, Object> v, String key, int absent, TaskYaml yaml, List<String> problems) {
        Object o = v.get(key);
        if (o == null) {
            return absent;
        }
        if (o instanceof Long l && l >= 0 && l < 1_000_000) {
            return l.intValue();
        }
        problems.add(yaml.where(key) + ": " + key + " is a whole number, got " + o);
        return absent;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<String, Object> v, String key, TaskYaml yaml, List<String> problems) {
        Object o = v.get(key);
        if (o == null) {
            return null;
        }
        if (!(o instanceof Map)) {
            problems.add(yaml.where(key) + ": " + key + " is a mapping");
            return null;
        }
        return (Map<String, Object>) o;
    }
}
