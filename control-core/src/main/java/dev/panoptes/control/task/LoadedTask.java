package dev.panoptes.control.task;

import dev.panoptes.control.suite.Suite;

import java.util.List;
import java.util.Objects;

/**
 * An lm-eval task file read and applied to its data: the vignettes it asks and how.
 *
 * @param name        the task's {@code task} name
 * @param outputType  {@code multiple_choice}, {@code loglikelihood} or {@code generate_until}
 * @param suite       one vignette per document of the evaluation split, its id the document's
 *                    index (lm-eval's {@code doc_id}), its prompt the few-shot context and the
 *                    document's text, its metadata the document's fields; the suite's digest is
 *                    the task's identity (its configuration after includes, the data files' digests,
 *                    and every rendered prompt, few-shot examples included); a loglikelihood task's
 *                    vignette has one choice, the document's continuation, with no delimiter
 * @param scorer      the run's scorer: {@code acc} or {@code acc_norm} (the first of the task's
 *                    metrics) for multiple choice, {@code acc} (is_greedy) for loglikelihood, an
 *                    {@code exact_match:{...}} spec for generation
 * @param temperature from {@code generation_kwargs} (null when it samples at the API's default); 0 for
 *                    multiple choice and loglikelihood, whose log-likelihood requests are sent at 0
 * @param maxTokens   {@code max_gen_toks}, or null (multiple choice, loglikelihood)
 * @param stop        {@code until}, empty for none
 * @param repeats     how many times each document is asked (lm-eval's {@code repeats}), at least 1
 * @param metrics     the task's metric names, in its order
 */
public record LoadedTask(String name, String outputType, Suite suite, String scorer, Double temperature,
                         Integer maxTokens, List<String> stop, int repeats, List<String> metrics) {
    /** @throws IllegalArgumentException when repeats is below 1 */
    public LoadedTask {
        Objects.requireNonNull(suite, "suite");
        Objects.requireNonNull(scorer, "scorer");
        stop = stop == null ? List.of() : List.copyOf(stop);
        metrics = List.copyOf(metrics);
        if (repeats < 1) {
            throw new IllegalArgumentException("repeats must be at least 1, got " + repeats);
        }
    }

    /** True for a multiple-choice task, asked by log-likelihood. */
    public boolean isMultipleChoice() {
        return "multiple_choice".equals(outputType);
    }

    /** True for a loglikelihood task: one continuation per document, scored perplexity and acc (is_greedy). */
    public boolean isLoglikelihood() {
        return "loglikelihood".equals(outputType);
    }
}
