package dev.panoptes.report;

import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.stats.ClusteredMean;

import java.util.Collections;
import java.util.HashMap;
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
     * The metrics of a run's multiple-choice answers, computed one answer at a time ({@link RunTally}
     * gives it every answer, from a list or streamed from the store): per metric and model a
     * {@link ClusteredMean} (per vignette a few numbers, not the answers), and with a group-by key
     * one per group; per model the same of its continuations' log-likelihoods, for perplexity.
     * Not thread-safe.
     */
    static final class Tally {
        private final String groupBy;
        private final Map<String, Map<String, MetricTally>> byMetric = new LinkedHashMap<>();
        private final Map<String, ClusteredMean> perplexity = new HashMap<>();
        private final Map<String, Map<String, ClusteredMean>> perplexityByGroup = new HashMap<>();

        /** @param groupBy the group-by key, or null */
        Tally(String groupBy) {
            this.groupBy = groupBy;
            for (String metric : Scorers.loglikelihoodNames()) {
                byMetric.put(metric, new HashMap<>());
            }
        }

        /** Counts one answer ({@code group}: its value of the group-by key, null without one). */
        void add(SampleRow row, String group) {
            if (row.expected() == null && !isChoiceAnswer(row.response())) {
                return; // in no metric and no perplexity: most answers of a run asked for text
            }
            ChoiceLoglikelihoods answer = parsedAnswer(row);
            for (Map.Entry<String, Map<String, MetricTally>> metric : byMetric.entrySet()) {
                Double value = value(metric.getKey(), row, answer);
                if (value != null) {
                    MetricTally t = metric.getValue().computeIfAbsent(row.model(), m -> new MetricTally());
                    t.all.add(row.vignetteId(), value);
                    t.answered |= !row.failed();
                    if (group != null) {
                        t.groups.computeIfAbsent(group, g -> new ClusteredMean()).add(row.vignetteId(), value);
                    }
                }
            }
            if (answer != null && answer.isContinuation() && Double.isFinite(answer.loglikelihoods().get(0))) {
                double ll = answer.loglikelihoods().get(0);
                perplexity.computeIfAbsent(row.model(), m -> new ClusteredMean()).add(row.vignetteId(), ll);
                if (group != null) {
                    perplexityByGroup.computeIfAbsent(row.model(), m -> new HashMap<>())
                            .computeIfAbsent(group, g -> new ClusteredMean()).add(row.vignetteId(), ll);
                }
            }
        }

        /** The metrics of the answers counted, per model in {@code models}' order. */
        ChoiceMetrics metrics(List<String> models) {
            Map<String, Map<String, Estimate>> metrics = new LinkedHashMap<>();
            Map<String, Map<String, Map<String, Estimate>>> groups = new LinkedHashMap<>();
            for (Map.Entry<String, Map<String, MetricTally>> metric : byMetric.entrySet()) {
                Map<String, Estimate> byModel = new LinkedHashMap<>();
                Map<String, Map<String, Estimate>> groupsByModel = new LinkedHashMap<>();
                for (String model : models) {
                    MetricTally t = metric.getValue().get(model);
                    if (t == null || !t.answered) {
                        continue;
                    }
                    byModel.put(model, t.all.estimate());
                    if (groupBy != null) {
                        Map<String, Estimate> sorted = new TreeMap<>();
                        t.groups.forEach((g, mean) -> sorted.put(g, mean.estimate()));
                        groupsByModel.put(model, Collections.unmodifiableMap(sorted));
                    }
                }
                if (!byModel.isEmpty()) {
                    metrics.put(metric.getKey(), Collections.unmodifiableMap(byModel));
                    groups.put(metric.getKey(), Collections.unmodifiableMap(groupsByModel));
                }
            }
            Map<String, Perplexity.Figure> ppl = new LinkedHashMap<>();
            Map<String, Map<String, Perplexity.Figure>> pplByGroup = new LinkedHashMap<>();
            for (String model : models) {
                ClusteredMean lls = perplexity.get(model);
                if (lls != null) {
                    ppl.put(model, Perplexity.of(lls.estimate()));
                }
                Map<String, ClusteredMean> byGroup = perplexityByGroup.get(model);
                if (byGroup != null) {
                    Map<String, Perplexity.Figure> figures = new LinkedHashMap<>();
                    new TreeMap<>(byGroup).forEach((g, mean) -> figures.put(g, Perplexity.of(mean.estimate())));
                    pplByGroup.put(model, Collections.unmodifiableMap(figures));
                }
            }
            if (metrics.isEmpty() && ppl.isEmpty()) {
                return NONE;
            }
            return new ChoiceMetrics(Collections.unmodifiableMap(metrics), Collections.unmodifiableMap(groups),
                    Collections.unmodifiableMap(ppl), Collections.unmodifiableMap(pplByGroup));
        }

        /** One metric of one model: over all its answers, whether one of them did not fail, per group. */
        private static final class MetricTally {
            final ClusteredMean all = new ClusteredMean();
            final Map<String, ClusteredMean> groups = new HashMap<>();
            boolean answered;
        }
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
        return value(metric, row, parsedAnswer(row));
    }

    /** The same, {@code answer} being the row's {@link #parsedAnswer}: one parse for every metric. */
    private static Double value(String metric, SampleRow row, ChoiceLoglikelihoods answer) {
        if (row.expected() == null || row.expected().isEmpty()) {
            return null;
        }
        if (row.failed()) {
            return 0.0;
        }
        if (!isChoiceAnswer(row.response())) {
            return null;
        }
        if (answer == null) {
            return 0.0; // not such JSON after all: the scorer gives it 0, with the reason
        }
        if (!metric.equals("acc") && answer.isContinuation()) {
            return null; // acc_norm and acc_bytes compare choices: a continuation has neither
        }
        return Scorers.loglikelihoodScore(metric, answer, row.expected()).value();
    }

    /** The log-likelihoods of an answer that did not fail and was asked by log-likelihood; else null. */
    private static ChoiceLoglikelihoods parsedAnswer(SampleRow row) {
        return row.failed() || !isChoiceAnswer(row.response()) ? null : parse(row.response());
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
