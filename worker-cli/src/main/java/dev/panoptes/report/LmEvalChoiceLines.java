package dev.panoptes.report;

import dev.panoptes.control.score.ChoiceLoglikelihoods;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parts of an lm-eval sample line that differ for a document asked by log-likelihood
 * (multiple choice), as {@code lm_eval --log_samples} writes them: one request per choice, so
 * {@code arguments} holds per choice its {@code (context, continuation)} pair
 * ({@code gen_args_i: {arg_0: context, arg_1: continuation}}); {@code resps} holds per choice the
 * list of its repeats' {@code (loglikelihood, is_greedy)} and {@code filtered_resps} per choice
 * the first repeat's pair (lm-eval's {@code take_first}; every repeat's when there are several,
 * as Panoptes scores them all). lm-eval writes every one of those values through
 * {@code sanitize_list}, that is as Python's {@code str}: {@code "-5.61"} and {@code "False"},
 * so they are strings here too. {@code metrics} is {@code ["acc", "acc_norm"]} and the line has
 * both, each the mean over the document's repeats (a failed repeat counts 0, as in every figure;
 * null when the document has no expected choice), recomputed from the stored log-likelihoods as
 * lm-eval's {@code process_results} does.
 *
 * <p>Stateless; any thread.
 */
final class LmEvalChoiceLines {
    /** The metrics of a multiple-choice line, in lm-eval's order. */
    static final List<String> METRICS = List.of("acc", "acc_norm");

    private LmEvalChoiceLines() {
    }

    /**
     * Fills {@code line}'s arguments, resps, filtered_resps, metrics and metric values for one
     * document's repeats (in epoch order).
     *
     * @param context the prompt the choices continue (lm-eval's {@code arg_0})
     */
    static void fill(Map<String, Object> line, List<SampleRow> repeats, String context) {
        fillRequests(line, answers(repeats), context);
        line.put("metrics", METRICS);
        for (String metric : METRICS) {
            line.put(metric, mean(metric, repeats));
        }
    }

    /** The answered repeats' log-likelihoods, in epoch order: failed ones and text answers left out. */
    static List<ChoiceLoglikelihoods> answers(List<SampleRow> repeats) {
        List<ChoiceLoglikelihoods> answers = new ArrayList<>();
        for (SampleRow r : repeats) {
            if (!r.failed() && ChoiceMetrics.isChoiceAnswer(r.response())) {
                answers.add(ChoiceLoglikelihoods.parse(r.response()));
            }
        }
        return answers;
    }

    /**
     * Fills {@code line}'s arguments, resps, filtered_resps and filter: one request per choice
     * (one in all for a loglikelihood document's continuation).
     */
    static void fillRequests(Map<String, Object> line, List<ChoiceLoglikelihoods> answers, String context) {
        int choices = answers.isEmpty() ? 0 : answers.get(0).loglikelihoods().size();
        List<String> continuations = answers.isEmpty() ? List.of() : answers.get(0).continuations();
        Map<String, Object> arguments = new LinkedHashMap<>();
        List<Object> resps = new ArrayList<>(choices);
        List<Object> filtered = new ArrayList<>(choices);
        for (int i = 0; i < choices; i++) {
            Map<String, Object> args = new LinkedHashMap<>();
            args.put("arg_0", context);
            // Unknown for an answer stored before continuations were recorded with it.
            args.put("arg_1", continuations.isEmpty() ? null : continuations.get(i));
            arguments.put("gen_args_" + i, args);
            List<Object> perRepeat = new ArrayList<>(answers.size());
            for (ChoiceLoglikelihoods a : answers) {
                perRepeat.add(pair(a, i));
            }
            resps.add(perRepeat);
            filtered.add(perRepeat.size() == 1 ? perRepeat.get(0) : perRepeat);
        }
        line.put("arguments", arguments);
        line.put("resps", resps);
        line.put("filtered_resps", filtered);
        line.put("filter", LmEvalExport.FILTER);
    }

    /** lm-eval's {@code (loglikelihood, is_greedy)} as its {@code sanitize_list} writes it: two Python strs. */
    private static List<String> pair(ChoiceLoglikelihoods a, int choice) {
        return List.of(PythonJson.floatRepr(a.loglikelihoods().get(choice)),
                a.greedy().get(choice) ? "True" : "False");
    }

    /** The metric's mean over the repeats that have a value; null when none has. */
    private static Double mean(String metric, List<SampleRow> repeats) {
        double sum = 0;
        int n = 0;
        for (SampleRow r : repeats) {
            Double v = ChoiceMetrics.value(metric, r);
            if (v != null) {
                sum += v;
                n++;
            }
        }
        return n == 0 ? null : sum / n;
    }
}
