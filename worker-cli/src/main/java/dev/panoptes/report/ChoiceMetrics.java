package dev.panoptes.report;

import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.stats.Sample;
import dev.panoptes.control.store.ScoreEntry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * lm-eval's multiple-choice metrics ({@code acc}, {@code acc_norm}, {@code acc_bytes}) of a run's
 * answers asked by log-likelihood, each recomputed from the stored answers (their per-choice
 * log-likelihoods and choice lengths) and the expected choice, with the same interval as every
 * accuracy figure ({@link Accuracy}, clustered by vignette). The run's own scoring gives one of
 * them; these give the others beside it. A failed answer counts 0, as in every figure.
 *
 * <p>An answer of one choice is the answer to lm-eval's {@code loglikelihood} request (a
 * loglikelihood task's continuation): its {@code acc} is is_greedy, it is in no {@code acc_norm}
 * or {@code acc_bytes} (which compare choices; a model with only such answers has neither
 * figure), and its log-likelihood is in the model's {@link #perplexity()}, lm-eval's
 * {@code exp(-mean ll)} with {@link Perplexity}'s interval. A failed answer has no
 * log-likelihood, so it is in no perplexity (it counts 0 in acc).
 *
 * <p>Immutable once built.
 */
public final class ChoiceMetrics {
    /** Scores each answer by the metric named in each call ({@link RunScoring#score(String, String, String)}). */
    private static final RunScoring SCORING = new RunScoring("acc");

    private final Map<String, Map<String, Estimate>> byMetric;
    private final Map<String, Map<String, Map<String, Estimate>>> byGroup;
    private final Map<String, Perplexity.Figure> perplexity;
    private final Map<String, Map<String, Perplexity.Figure>> perplexityByGroup;

    private ChoiceMetrics(Map<String, Map<String, Estimate>> byMetric,
                          Map<String, Map<String, Map<String, Estimate>>> byGroup,
                          Map<String, Perplexity.Figure> perplexity,
                          Map<String, Map<String, Perplexity.Figure>> perplexityByGroup) {
        this.byMetric = byMetric;
        this.byGroup = byGroup;
        this.perplexity = perplexity;
        this.perplexityByGroup = perplexityByGroup;
    }

    /** No multiple-choice answers. */
    static final ChoiceMetrics NONE = new ChoiceMetrics(Map.of(), Map.of(), Map.of(), Map.of());

    /**
     * The metrics of a run's multiple-choice answers, per model in {@code models}' order; none
     * when the run has no answer asked by log-likelihood.
     */
    static ChoiceMetrics of(RunData data, List<String> models) {
        return of(data, models, null);
    }

    /**
     * The same, and with a group-by key also per model per value of that key (a group file's
     * tasks), sorted by value.
     */
    static ChoiceMetrics of(RunData data, List<String> models, String groupBy) {
        Map<String, Map<String, Estimate>> byMetric = new LinkedHashMap<>();
        Map<String, Map<String, Map<String, Estimate>>> byGroup = new LinkedHashMap<>();
        for (String metric : Scorers.loglikelihoodNames()) {
            Map<String, Estimate> byModel = new LinkedHashMap<>();
            Map<String, Map<String, Estimate>> groupsByModel = new LinkedHashMap<>();
            for (String model : models) {
                List<Sample> samples = new ArrayList<>();
                List<String> groups = new ArrayList<>();
                boolean answered = false;
                for (SampleRow row : data.samples()) {
                    Double value = row.model().equals(model) ? value(metric, row) : null;
                    if (value != null) {
                        samples.add(new Sample(row.vignetteId(), value));
                        groups.add(groupBy == null ? "" : RunStats.groupOf(row, groupBy));
                        answered |= !row.failed();
                    }
                }
                if (answered) {
                    byModel.put(model, Accuracy.of(samples));
                    if (groupBy != null) {
                        groupsByModel.put(model, Collections.unmodifiableMap(new TreeMap<>(
                                Accuracy.byGroup(samples, groups))));
                    }
                }
            }
            if (!byModel.isEmpty()) {
                byMetric.put(metric, Collections.unmodifiableMap(byModel));
                byGroup.put(metric, Collections.unmodifiableMap(groupsByModel));
            }
        }
        Map<String, Perplexity.Figure> perplexity = new LinkedHashMap<>();
        Map<String, Map<String, Perplexity.Figure>> perplexityByGroup = new LinkedHashMap<>();
        perplexity(data, models, groupBy, perplexity, perplexityByGroup);
        return new ChoiceMetrics(Collections.unmodifiableMap(byMetric), Collections.unmodifiableMap(byGroup),
                Collections.unmodifiableMap(perplexity), Collections.unmodifiableMap(perplexityByGroup));
    }

    /**
     * One answer's value of a multiple-choice metric, as every figure of it counts the answer
     * (this, {@code compare}'s per-metric differences and the lm-eval export): 0 when the answer
     * failed, the metric's score of a stored log-likelihood answer, or null (in no figure) when
     * the vignette has no expected choice, the answer is not one asked by log-likelihood, the
     * metric compares choices and the answer is to one continuation, or the metric gives no score.
     *
     * @param metric {@code acc}, {@code acc_norm} or {@code acc_bytes}
     * @param row    the answer
     */
    static Double value(String metric, SampleRow row) {
        if (row.expected() == null || row.expected().isEmpty()) {
            return null;
        }
        if (row.failed()) {
            return 0.0;
        }
        if (!isChoiceAnswer(row.response())) {
            return null;
        }
        if (!metric.equals("acc") && isContinuation(row.response())) {
            return null; // acc_norm and acc_bytes compare choices: a continuation has neither
        }
        ScoreEntry e = SCORING.score(metric, row.expected(), row.response());
        return e == null ? null : e.score();
    }

    /** True when {@code response} is a stored log-likelihood answer. */
    static boolean isChoiceAnswer(String response) {
        return response != null && response.startsWith("{\"resps\":");
    }

    /**
     * True when the model has an answer that did not fail and counts in {@code metric}: without
     * one its run has no such figure for it (failed answers alone say nothing of it, and a
     * continuation's answer is in no metric that compares choices).
     */
    static boolean hasAnswer(RunData data, String model, String metric) {
        for (SampleRow row : data.samples()) {
            if (row.model().equals(model) && !row.failed() && value(metric, row) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Per model with answers to one continuation, the perplexity of their log-likelihoods into
     * {@code byModel}, and with a group-by key per value of it (sorted) into {@code byGroup}: a
     * group of loglikelihood tasks has each task's perplexity, not an aggregate over them.
     */
    private static void perplexity(RunData data, List<String> models, String groupBy,
                                   Map<String, Perplexity.Figure> byModel,
                                   Map<String, Map<String, Perplexity.Figure>> byGroup) {
        for (String model : models) {
            List<Sample> lls = new ArrayList<>();
            Map<String, List<Sample>> groups = new TreeMap<>();
            for (SampleRow row : data.samples()) {
                if (!row.model().equals(model) || row.failed() || row.response() == null
                        || !row.response().startsWith("{\"resps\":")) {
                    continue;
                }
                ChoiceLoglikelihoods answer = parse(row.response());
                if (answer != null && answer.isContinuation() && Double.isFinite(answer.loglikelihoods().get(0))) {
                    Sample ll = new Sample(row.vignetteId(), answer.loglikelihoods().get(0));
                    lls.add(ll);
                    if (groupBy != null) {
                        groups.computeIfAbsent(RunStats.groupOf(row, groupBy), g -> new ArrayList<>()).add(ll);
                    }
                }
            }
            if (!lls.isEmpty()) {
                byModel.put(model, Perplexity.of(lls));
            }
            if (!groups.isEmpty()) {
                Map<String, Perplexity.Figure> figures = new LinkedHashMap<>();
                groups.forEach((g, samples) -> figures.put(g, Perplexity.of(samples)));
                byGroup.put(model, Collections.unmodifiableMap(figures));
            }
        }
    }

    private static boolean isContinuation(String response) {
        ChoiceLoglikelihoods answer = parse(response);
        return answer != null && answer.isContinuation();
    }

    /** The stored answer's log-likelihoods; null when it is not such JSON (it then scores 0 with a reason). */
    private static ChoiceLoglikelihoods parse(String response) {
        try {
            return ChoiceLoglikelihoods.parse(response);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** True when the run has answers asked by log-likelihood. */
    public boolean isEmpty() {
        return byMetric.isEmpty() && perplexity.isEmpty();
    }

    /**
     * Model to the perplexity of its answers to one continuation each (a loglikelihood task's),
     * in the run's model order; empty when no model has such answers. Unmodifiable.
     */
    public Map<String, Perplexity.Figure> perplexity() {
        return perplexity;
    }

    /**
     * Model to the value of the run's group-by key to the perplexity of that group's answers,
     * sorted by value; empty without a group-by key or such answers. Unmodifiable.
     */
    public Map<String, Map<String, Perplexity.Figure>> perplexityByGroup() {
        return perplexityByGroup;
    }

    /**
     * Metric to model to the value of the run's group-by key to its estimate, sorted by value;
     * empty without a group-by key. Unmodifiable.
     */
    public Map<String, Map<String, Map<String, Estimate>>> byGroup() {
        return byGroup;
    }

    /** Metric ({@code acc}, {@code acc_norm}, {@code acc_bytes}) to model to its estimate; unmodifiable. */
    public Map<String, Map<String, Estimate>> byMetric() {
        return byMetric;
    }
}
