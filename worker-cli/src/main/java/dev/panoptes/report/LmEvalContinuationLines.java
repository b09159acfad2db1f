package dev.panoptes.report;

import dev.panoptes.control.score.ChoiceLoglikelihoods;

import java.util.List;
import java.util.Map;

/**
 * The parts of an lm-eval sample line that differ for a document of a loglikelihood task (one
 * continuation, asked by log-likelihood), as {@code lm_eval --log_samples} writes them: one
 * request, {@code arguments} {@code {gen_args_0: {arg_0: context, arg_1: continuation}}} (the
 * continuation is {@code doc_to_target} with no delimiter before it); {@code resps}
 * {@code [[[ll, is_greedy], ...repeats]]} and {@code filtered_resps} {@code [[ll, is_greedy]]}
 * (take_first), written as Python's {@code str} as {@link LmEvalChoiceLines} writes them;
 * {@code target} the continuation; {@code metrics} {@code ["perplexity", "acc"]} and the line's
 * values as lm-eval's {@code process_results} gives them for this output type:
 * {@code perplexity} the document's log-likelihood {@code ll} (a float: the aggregation, not the
 * line, takes exp(-mean)) and {@code acc} {@code int(is_greedy)}.
 *
 * <p>With several repeats (epochs), each answered repeat counts: {@code perplexity} is the mean of
 * their log-likelihoods and {@code acc} the mean of their greedy flags, so that the results'
 * figures are lm-eval's aggregations of the lines when every document has every epoch. A failed
 * repeat has no log-likelihood: it is in no {@code perplexity} and counts 0 in {@code acc}, as in
 * the run summary; a line with no answered repeat has {@code perplexity} null.
 *
 * <p>Stateless; any thread.
 */
final class LmEvalContinuationLines {
    /** lm-eval's metrics of a loglikelihood task, in its order ({@code DEFAULT_METRIC_REGISTRY}). */
    static final List<String> METRICS = List.of("perplexity", "acc");

    private LmEvalContinuationLines() {
    }

    /**
     * Fills {@code line}'s arguments, resps, filtered_resps, metrics and metric values for one
     * document's repeats (in epoch order).
     *
     * @param context the prompt the continuation follows (lm-eval's {@code arg_0})
     */
    static void fill(Map<String, Object> line, List<SampleRow> repeats, String context) {
        List<ChoiceLoglikelihoods> answers = LmEvalChoiceLines.answers(repeats);
        LmEvalChoiceLines.fillRequests(line, answers, context);
        line.put("metrics", METRICS);
        double sum = 0;
        for (ChoiceLoglikelihoods a : answers) {
            sum += a.loglikelihoods().get(0);
        }
        line.put("perplexity", answers.isEmpty() ? null : sum / answers.size());
        int greedy = 0;
        int counted = 0;
        for (SampleRow r : repeats) {
            if (r.failed()) {
                counted++;
            } else if (ChoiceMetrics.isChoiceAnswer(r.response())) {
                counted++;
                greedy += ChoiceLoglikelihoods.parse(r.response()).greedy().get(0) ? 1 : 0;
            }
        }
        // lm-eval's int(is_greedy) for one repeat; the mean of the repeats' for several.
        line.put("acc", counted == 0 ? null : counted == 1 ? (Object) greedy : (Object) ((double) greedy / counted));
    }

    /** lm-eval's {@code target}, the continuation; the stored expected answer when no answer records it. */
    static String target(List<SampleRow> repeats, String fallback) {
        for (ChoiceLoglikelihoods a : LmEvalChoiceLines.answers(repeats)) {
            if (!a.continuations().isEmpty()) {
                return a.continuations().get(0);
            }
        }
        return fallback;
    }
}
