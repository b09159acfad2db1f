package dev.panoptes.report;

import dev.panoptes.control.Usage;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.ClusterTotals;
import dev.panoptes.control.stats.ClusteredMean;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.stats.PassAtK;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The figures of {@link RunStats}, computed one answer at a time: the one computation behind
 * {@link RunStats#of(RunData, String)} (which gives it a run's list of answers) and the summary
 * of a run streamed from the store ({@link RunDataLoader#stats}) or counted as its answers are
 * stored ({@link LiveFigures}), which hold no answer.
 *
 * <p>What it keeps grows with the vignettes, not the answers: per model and vignette the
 * {@link ClusterTotals} of the figure score (count, sum, mean, squared deviations) and its passes,
 * in arrays with no object per vignette ({@link VignetteTallies}; sized up front when the number
 * of vignettes is known, so that counting allocates nothing more), whose pass count gives pass@k
 * and whose mean gives the paired comparison, and a second one only for a
 * vignette with a failed answer (for the figure without failed answers); per model and group,
 * per metric and model, a few numbers; latencies as counts per millisecond
 * ({@link LatencyCounts}). The clustered intervals need no more: a vignette is a cluster. The
 * per-worker table needs each answer's job and is not kept here (see {@link #stats}).
 *
 * <p>A vignette is counted in the group of its first scored answer (a vignette's metadata, and
 * so its group, is one per run).
 *
 * <p>Not thread-safe: one thread adds, then asks for the figures.
 */
public final class RunTally {
    private final String groupBy;
    private final int vignettesPerModel;
    private final Map<String, ModelTally> models = new LinkedHashMap<>();
    /** One instance per group value, so that a vignette's tally holds a reference, not a copy. */
    private final Map<String, String> groupNames = new HashMap<>();
    private final ChoiceMetrics.Tally choices;
    private final LatencyCounts latencies = new LatencyCounts();
    private boolean passFail = true;
    private int cached;
    private final Set<String> cacheSources = new HashSet<>();
    private long cachedPrompt;
    private long cachedCompletion;

    /**
     * @param groupBy the metadata key to break figures down by; null or blank for none
     */
    public RunTally(String groupBy) {
        this(groupBy, 0);
    }

    /**
     * @param groupBy             the metadata key to break figures down by; null or blank for none
     * @param vignettesPerModel   how many vignettes each model is to answer, when known (0 when
     *                            not): room for them is made at a model's first answer, so that
     *                            counting more allocates nothing more
     */
    public RunTally(String groupBy, int vignettesPerModel) {
        this.groupBy = groupBy == null || groupBy.isBlank() ? null : groupBy;
        this.choices = new ChoiceMetrics.Tally(this.groupBy);
        this.vignettesPerModel = Math.max(0, vignettesPerModel);
    }

    /** The group-by key, or null. */
    String groupBy() {
        return groupBy;
    }

    /** Counts one answer of the run in every figure. */
    public void add(SampleRow row) {
        ModelTally model = models.computeIfAbsent(row.model(), m -> new ModelTally(vignettesPerModel));
        String group = groupBy == null ? null : groupNames.computeIfAbsent(RunStats.groupOf(row, groupBy), g -> g);
        model.add(row, group);
        Double score = row.figureScore();
        if (score != null && score != 0.0 && score != 1.0) {
            passFail = false;
        }
        if (row.latencyMs() != null) {
            latencies.add(row.latencyMs());
        }
        if (row.cached()) {
            cached++;
            cacheSources.add(row.cachedFrom());
            cachedPrompt += row.promptTokens() == null ? 0 : row.promptTokens();
            cachedCompletion += row.completionTokens() == null ? 0 : row.completionTokens();
        }
        choices.add(row, group);
    }

    /**
     * The figures of the answers added.
     *
     * @param info     the run's header (its models come first, in its order)
     * @param failures its jobs that failed for good
     * @param scorers  the scorers that gave the answers' scores, the run's own first; may be empty
     * @param workers  the per-worker table, computed by the caller from the answers it holds; empty
     *                 when it holds none (a summary streamed from the store)
     * @return the statistics
     */
    public RunStats stats(RunInfo info, List<FailureRow> failures, List<String> scorers,
                          List<RunStats.WorkerStats> workers) {
        List<String> order = modelOrder(info.models(), models.keySet(), failures);
        List<RunStats.ModelStats> modelStats = new ArrayList<>(order.size());
        for (String name : order) {
            ModelTally m = models.getOrDefault(name, ModelTally.NONE);
            int failed = 0;
            for (FailureRow f : failures) {
                if (name.equals(f.model())) {
                    failed++;
                }
            }
            modelStats.add(m.stats(name, groupBy, failed));
        }
        List<RunStats.Comparison> comparison = new ArrayList<>();
        for (int i = 1; i < order.size(); i++) {
            comparison.add(compare(order.get(0), order.get(i)));
        }
        RunStats stats = new RunStats(info, groupBy, modelStats, workers, comparison,
                new RunStats.CacheHits(cached, cacheSources, new Usage(cachedPrompt, cachedCompletion)),
                choices.metrics(order), passAtK(order), scorers, latencies.nearestRank(50),
                latencies.nearestRank(95));
        return stats;
    }

    /** The run's models, then any other its answers or failures name, in order of first appearance. */
    static List<String> modelOrder(List<String> listed, Iterable<String> answered, List<FailureRow> failures) {
        Set<String> names = new LinkedHashSet<>(listed);
        for (String model : answered) {
            names.add(model);
        }
        for (FailureRow failure : failures) {
            if (failure.model() != null) {
                names.add(failure.model());
            }
        }
        return new ArrayList<>(names);
    }

    /**
     * The baseline against one model on the vignettes both scored: each side's mean over its
     * epochs, paired, in vignette id order ({@link ModelComparison}'s pairing within one run,
     * where a vignette id is asked with one prompt).
     */
    private RunStats.Comparison compare(String baseline, String model) {
        VignetteTallies base = models.getOrDefault(baseline, ModelTally.NONE).vignettes;
        VignetteTallies other = models.getOrDefault(model, ModelTally.NONE).vignettes;
        TreeMap<String, Double> differences = new TreeMap<>();
        for (int b = 0; b < base.size(); b++) {
            int o = other.indexOf(base.id(b));
            if (o >= 0) {
                differences.put(base.id(b), other.sum(o) / other.count(o) - base.sum(b) / base.count(b));
            }
        }
        return new RunStats.Comparison(baseline, model, differences.size(),
                PairedDifference.of(new ArrayList<>(differences.values())));
    }

    /**
     * pass@k per model over the epochs ({@link PassAtKFigures}): only when every figure score is 0
     * or 1 and some vignette was scored twice or more.
     */
    private PassAtKFigures passAtK(List<String> order) {
        if (!passFail) {
            return new PassAtKFigures(Map.of());
        }
        int epochs = 0;
        for (ModelTally m : models.values()) {
            for (int v = 0; v < m.vignettes.size(); v++) {
                epochs = Math.max(epochs, m.vignettes.count(v));
            }
        }
        if (epochs < 2) {
            return new PassAtKFigures(Map.of());
        }
        TreeSet<Integer> ks = new TreeSet<>(List.of(1, epochs));
        for (int k : new int[]{5, 10}) {
            if (k < epochs) {
                ks.add(k);
            }
        }
        Map<String, Map<Integer, Estimate>> out = new LinkedHashMap<>();
        for (String name : order) {
            ModelTally m = models.get(name);
            if (m == null || m.vignettes.isEmpty()) {
                continue;
            }
            List<int[]> problems = new ArrayList<>(m.vignettes.size());
            for (int v = 0; v < m.vignettes.size(); v++) {
                problems.add(new int[]{m.vignettes.count(v), m.vignettes.passes(v)});
            }
            Map<Integer, Estimate> byK = new LinkedHashMap<>();
            for (int k : ks) {
                Estimate e = PassAtK.over(problems, k);
                if (e.n() > 0) {
                    byK.put(k, e);
                }
            }
            out.put(name, byK);
        }
        return new PassAtKFigures(out);
    }

    /** One model's running figures. */
    private static final class ModelTally {
        static final ModelTally NONE = new ModelTally(0);

        int samples;
        long promptTokens;
        long completionTokens;
        int failedAnswers;
        final ClusteredMean.Totals figure = new ClusteredMean.Totals();
        final ClusteredMean.Totals answered = new ClusteredMean.Totals();
        final Map<String, ClusteredMean.Totals> groups = new LinkedHashMap<>();
        final VignetteTallies vignettes;

        ModelTally(int vignettes) {
            this.vignettes = new VignetteTallies(vignettes);
        }

        void add(SampleRow row, String group) {
            samples++;
            // Tokens (and so cost) count only what this run asked of a model.
            Usage charged = row.chargedUsage();
            promptTokens += charged.promptTokens();
            completionTokens += charged.completionTokens();
            if (row.failed()) {
                failedAnswers++;
            }
            Double score = row.figureScore();
            if (score == null) {
                return;
            }
            figure.add(score);
            if (group != null) {
                groups.computeIfAbsent(group, g -> new ClusteredMean.Totals()).add(score);
            }
            int v = vignettes.slotOf(row.vignetteId(), group);
            if (!row.failed()) {
                answered.add(score);
            }
            vignettes.add(v, score, row.failed());
        }

        RunStats.ModelStats stats(String name, String groupBy, int failures) {
            Map<String, Estimate> byGroup = Map.of();
            if (groupBy != null) {
                Map<String, java.util.Collection<ClusterTotals>> clusters = vignettes.byGroup();
                Map<String, Estimate> sorted = new TreeMap<>();
                groups.forEach((g, totals) -> sorted.put(g, Accuracy.of(totals, clusters.getOrDefault(g, List.of()))));
                byGroup = Collections.unmodifiableMap(sorted);
            }
            return new RunStats.ModelStats(name, samples, figure.n(), samples - figure.n(),
                    Accuracy.of(figure, vignettes.all()), byGroup, promptTokens, completionTokens, failures,
                    failedAnswers, Accuracy.of(answered, vignettes.withoutFailed()));
        }
    }
}
