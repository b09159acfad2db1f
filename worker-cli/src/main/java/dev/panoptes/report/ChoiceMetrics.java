package dev.panoptes.report;

import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
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
 * <p>Immutable once built.
 */
public final class ChoiceMetrics {
    /** Scores each answer by the metric named in each call ({@link RunScoring#score(String, String, String)}). */
    private static final RunScoring SCORING = new RunScoring("acc");

    private final Map<String, Map<String, Estimate>> byMetric;
    private final Map<String, Map<String, Map<String, Estimate>>> byGroup;

    private ChoiceMetrics(Map<String, Map<String, Estimate>> byMetric,
                          Map<String, Map<String, Map<String, Estimate>>> byGroup) {
        this.byMetric = byMetric;
        this.byGroup = byGroup;
    }

    /** No multiple-choice answers. */
    static final ChoiceMetrics NONE = new ChoiceMetrics(Map.of(), Map.of());

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
                for (SampleRow row : data.samples()) {
                    Double value = row.model().equals(model) ? value(metric, row) : null;
                    if (value != null) {
                        samples.add(new Sample(row.vignetteId(), value));
                        groups.add(groupBy == null ? "" : RunStats.groupOf(row, groupBy));
                    }
                }
                if (!samples.isEmpty() && hasAnswer(data, model)) {
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
        return new ChoiceMetrics(Collections.unmodifiableMap(byMetric), Collections.unmodifiableMap(byGroup));
    }

    /**
     * One answer's value of a multiple-choice metric, as every figure of it counts the answer
     * (this, {@code compare}'s per-metric differences and the lm-eval export): 0 when the answer
     * failed, the metric's score of a stored log-likelihood answer, or null (in no figure) when
     * the vignette has no expected choice, the answer is not one asked by log-likelihood, or the
     * metric gives no score.
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
        ScoreEntry e = SCORING.score(metric, row.expected(), row.response());
        return e == null ? null : e.score();
    }

    /** True when {@code response} is a stored log-likelihood answer. */
    static boolean isChoiceAnswer(String response) {
        return response != null && response.startsWith("{\"resps\":");
    }

    /**
     * True when the model has an answer asked by log-likelihood that did not fail: without one
     * its run has no multiple-choice metrics for it (failed answers alone say nothing of them).
     */
    static boolean hasAnswer(RunData data, String model) {
        for (SampleRow row : data.samples()) {
            if (row.model().equals(model) && !row.failed() && isChoiceAnswer(row.response())) {
                return true;
            }
        }
        return false;
    }

    /** True when the run has answers asked by log-likelihood. */
    public boolean isEmpty() {
        return byMetric.isEmpty();
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
