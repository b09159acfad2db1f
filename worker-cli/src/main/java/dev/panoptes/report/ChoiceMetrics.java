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
    private final Map<String, Map<String, Estimate>> byMetric;

    private ChoiceMetrics(Map<String, Map<String, Estimate>> byMetric) {
        this.byMetric = byMetric;
    }

    /** No multiple-choice answers. */
    static final ChoiceMetrics NONE = new ChoiceMetrics(Map.of());

    /**
     * The metrics of a run's multiple-choice answers, per model in {@code models}' order; none
     * when the run has no answer asked by log-likelihood.
     */
    static ChoiceMetrics of(RunData data, List<String> models) {
        RunScoring scoring = new RunScoring("acc");
        Map<String, Map<String, Estimate>> byMetric = new LinkedHashMap<>();
        for (String metric : Scorers.loglikelihoodNames()) {
            Map<String, Estimate> byModel = new LinkedHashMap<>();
            for (String model : models) {
                List<Sample> samples = new ArrayList<>();
                for (SampleRow row : data.samples()) {
                    if (!row.model().equals(model) || row.expected() == null || row.expected().isEmpty()) {
                        continue;
                    }
                    if (row.failed()) {
                        samples.add(new Sample(row.vignetteId(), 0));
                        continue;
                    }
                    if (row.response() == null || !row.response().startsWith("{\"resps\":")) {
                        continue;
                    }
                    ScoreEntry e = scoring.score(metric, row.expected(), row.response());
                    if (e != null && e.score() != null) {
                        samples.add(new Sample(row.vignetteId(), e.score()));
                    }
                }
                if (samples.stream().anyMatch(s -> true) && hasAnswer(data, model)) {
                    byModel.put(model, Accuracy.of(samples));
                }
            }
            if (!byModel.isEmpty()) {
                byMetric.put(metric, Collections.unmodifiableMap(byModel));
            }
        }
        return new ChoiceMetrics(Collections.unmodifiableMap(byMetric));
    }

    private static boolean hasAnswer(RunData data, String model) {
        for (SampleRow row : data.samples()) {
            if (row.model().equals(model) && !row.failed() && row.response() != null
                    && row.response().startsWith("{\"resps\":")) {
                return true;
            }
        }
        return false;
    }

    /** True when the run has answers asked by log-likelihood. */
    public boolean isEmpty() {
        return byMetric.isEmpty();
    }

    /** Metric ({@code acc}, {@code acc_norm}, {@code acc_bytes}) to model to its estimate; unmodifiable. */
    public Map<String, Map<String, Estimate>> byMetric() {
        return byMetric;
    }
}
