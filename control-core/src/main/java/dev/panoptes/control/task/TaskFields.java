package dev.panoptes.control.task;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which fields of an lm-eval task file Panoptes reads, which it passes over because they only
 * describe the task, and what to do about the ones it cannot run. Stateless.
 */
final class TaskFields {
    /** Fields that decide the run. */
    static final Set<String> READ = Set.of("task", "dataset_path", "dataset_name", "dataset_kwargs",
            "training_split", "validation_split", "test_split", "fewshot_split", "output_type", "doc_to_text",
            "doc_to_target", "doc_to_choice", "target_delimiter", "fewshot_delimiter", "num_fewshot",
            "generation_kwargs", "filter_list", "metric_list", "repeats", "description");
    /** Fields that describe the task and change no prompt or score. */
    static final Set<String> DESCRIPTIVE = Set.of("tag", "task_alias", "should_decontaminate",
            "doc_to_decontamination_query", "metadata", "unsafe_code");
    /** Fields lm-eval knows that Panoptes cannot run, with what to do instead. */
    static final Map<String, String> REFUSED = Map.ofEntries(
            Map.entry("process_docs", "it runs Python over the documents; apply it to the data first (write the"
                    + " processed documents to a JSONL file) and give that file with --dataset-file"),
            Map.entry("process_results", "it scores with Python; Panoptes scores with acc, acc_norm, perplexity and"
                    + " exact_match"),
            Map.entry("custom_dataset", "it builds the data in Python; write the documents to a JSONL file and give"
                    + " it with --dataset-file"),
            Map.entry("use_prompt", "promptsource prompts are not read; write the prompt as doc_to_text"),
            Map.entry("doc_to_image", "images are not sent by log-likelihood or text requests"),
            Map.entry("doc_to_audio", "audio is not sent by log-likelihood or text requests"),
            Map.entry("fewshot_config", "only the default sampler over fewshot_split is supported; remove"
                    + " fewshot_config and set fewshot_split"),
            Map.entry("gen_prefix", "an assistant prefix is not supported; put it at the end of doc_to_text"),
            Map.entry("group", "in a task file it is lm-eval's old tag: write it as tag:, or list this task in a"
                    + " group file (group: NAME, task: [task names or files]) and run that with --task"),
            Map.entry("task_list", "lm-eval's old group form is not read: write a group file (group: NAME, task:"
                    + " [task names or files]) and run that with --task"));
    /** What a metric becomes. */
    static final List<String> CHOICE_METRICS = List.of("acc", "acc_norm");
    /** A loglikelihood task's metrics, lm-eval's defaults for that output type, in its order. */
    static final List<String> LOGLIKELIHOOD_METRICS = List.of("perplexity", "acc");
    static final Set<String> FILTERS = Set.of("regex", "take_first");
    static final Set<String> GENERATION_KWARGS = Set.of("until", "max_gen_toks", "temperature", "do_sample");
    static final Set<String> EXACT_MATCH_OPTIONS = Set.of("ignore_case", "ignore_punctuation", "regexes_to_ignore",
            "ignore_numbers");
    static final Set<String> METRIC_META = Set.of("metric", "aggregation", "higher_is_better");

    private TaskFields() {
    }
}
