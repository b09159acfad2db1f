package dev.panoptes.report;

import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.PairedDifference;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * One metric of a model pair compared ({@code compare}): the paired difference over every shared
 * vignette, and with a group-by key (a group file's {@code task}) per group and the unweighted
 * mean over the groups, as lm-eval reports a group's tasks and their aggregate.
 *
 * <p><b>Which metrics.</b> lm-eval's multiple-choice metrics ({@code acc}, {@code acc_norm},
 * {@code acc_bytes}), each answer counted as {@link ChoiceMetrics#value} counts it (recomputed
 * from its log-likelihoods; a failed answer counts 0), when both sides have answers asked by
 * log-likelihood. Runs without such answers but with a group-by key get one entry instead: the
 * figure score ({@link SampleRow#figureScore()}), named after the scorer both sides share (or
 * {@code score} when they differ), so that a generate_until group is broken down by task too.
 *
 * <p><b>The figures.</b> The vignettes are paired as {@link ModelComparison} pairs them (same id,
 * prompt and expected answer; each side's mean over its epochs), each under this metric.
 * {@link #difference()} is {@link PairedDifference#of} over all of them: lm-eval's aggregate
 * with {@code weight_by_size: true}, each vignette once. Per group (the baseline's sample's value
 * of the key, {@value RunStats#NO_GROUP} when it has none) the same over that group's vignettes;
 * {@link #groupMean()} is {@link PairedDifference#meanOf} those: each group counted once, as
 * lm-eval's {@code weight_by_size: false}. Every figure can be recomputed from the runs'
 * per-sample exports ({@code export --format lm-eval} writes acc and acc_norm per document).
 *
 * <p>Immutable and thread-safe.
 *
 * @param metric     the metric ({@code acc}, {@code acc_norm}, {@code acc_bytes}, or the scorer)
 * @param groupBy    the key broken down by; null for none
 * @param difference the paired difference over every shared vignette, other minus baseline
 * @param groups     per value of the key, sorted by value, its paired difference; empty without a key
 * @param groupMean  the unweighted mean over the groups; null with fewer than two groups
 */
public record MetricComparison(String metric, String groupBy, PairedDifference difference, List<Group> groups,
                               PairedDifference groupMean) {
    /** Copies groups; checks the figures are there. */
    public MetricComparison {
        Objects.requireNonNull(metric, "metric");
        Objects.requireNonNull(difference, "difference");
        groups = List.copyOf(groups);
    }

    /**
     * One group's paired difference.
     *
     * @param group      the value of the group-by key
     * @param difference the paired difference over the group's shared vignettes
     */
    public record Group(String group, PairedDifference difference) {
    }

    /** The shared vignettes under this metric. */
    public int shared() {
        return difference.vignettes();
    }

    /**
     * The metrics two sides share, each compared.
     *
     * @param baselineRun   the run of the baseline
     * @param baselineModel the baseline model
     * @param run           the run of the other model; may be baselineRun
     * @param model         the other model
     * @param groupBy       the metadata key to break each metric down by; null or blank for none
     * @return per metric, in {@link Scorers#loglikelihoodNames()} order, those with a shared
     *         vignette; empty when there is none (and no group-by key for the figure)
     * @throws NullPointerException when a run or model is null
     */
    public static List<MetricComparison> of(RunData baselineRun, String baselineModel, RunData run, String model,
                                            String groupBy) {
        String key = groupBy == null || groupBy.isBlank() ? null : groupBy;
        List<MetricComparison> metrics = new ArrayList<>();
        for (String metric : Scorers.loglikelihoodNames()) {
            if (!ChoiceMetrics.hasAnswer(baselineRun, baselineModel, metric)
                    || !ChoiceMetrics.hasAnswer(run, model, metric)) {
                continue;
            }
            MetricComparison m = compare(metric, baselineRun, baselineModel, run, model, key,
                    row -> ChoiceMetrics.value(metric, row));
            if (m.shared() > 0) {
                metrics.add(m);
            }
        }
        if (metrics.isEmpty() && key != null) {
            String scorer = Objects.equals(baselineRun.info().scorer(), run.info().scorer())
                    && baselineRun.info().scorer() != null ? baselineRun.info().scorer() : "score";
            MetricComparison m = compare(scorer, baselineRun, baselineModel, run, model, key,
                    SampleRow::figureScore);
            if (m.shared() > 0) {
                metrics.add(m);
            }
        }
        return List.copyOf(metrics);
    }

    private static MetricComparison compare(String metric, RunData baselineRun, String baselineModel, RunData run,
                                            String model, String groupBy, Function<SampleRow, Double> score) {
        ModelComparison.Pairing pairing = ModelComparison.pair(baselineRun, baselineModel, run, model, score);
        if (groupBy == null) {
            return new MetricComparison(metric, null, pairing.difference(), List.of(), null);
        }
        Map<String, List<Double>> byGroup = new TreeMap<>();
        for (ModelComparison.Paired p : pairing.pairs()) {
            byGroup.computeIfAbsent(RunStats.groupOf(p.asked(), groupBy), g -> new ArrayList<>()).add(p.difference());
        }
        List<Group> groups = new ArrayList<>(byGroup.size());
        for (Map.Entry<String, List<Double>> g : byGroup.entrySet()) {
            groups.add(new Group(g.getKey(), PairedDifference.of(g.getValue())));
        }
        PairedDifference mean = groups.size() < 2 ? null
                : PairedDifference.meanOf(groups.stream().map(Group::difference).toList());
        return new MetricComparison(metric, groupBy, pairing.difference(), groups, mean);
    }
}
