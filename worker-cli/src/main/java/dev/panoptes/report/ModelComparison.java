package dev.panoptes.report;

import dev.panoptes.control.stats.PairedDifference;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Pairs the answers of two models, of one run or of two, on the vignettes they share, and says
 * how much the one scored above the other: the logic behind {@code compare} and the comparison
 * tables of the report.
 *
 * <p><b>Shared vignettes.</b> A vignette is shared when both sides have a sample of it in the
 * figures (a graded answer, or a failed answer, which counts 0) and both asked it with the same
 * prompt and the same expected answer: a vignette id reused for another question in an edited
 * suite is left out, not compared. Each side's score of a vignette is its mean over that side's
 * epochs. The rest are counted: vignettes only one side scored, and vignettes whose prompt or
 * expected answer differ.
 *
 * <p><b>The figure.</b> d_v = score of {@code other} minus score of {@code baseline} on each
 * shared vignette, summarised by {@link PairedDifference} ({@value PairedDifference#METHOD}):
 * the mean, its standard error clustered by vignette, a 95 % interval and a two-sided p-value.
 * The vignettes whose score changed (d_v not 0) are listed, sorted by vignette id.
 *
 * <p>Every number can be recomputed from the two runs' {@code results} exports: group by model
 * and vignette id, average the score column (a failed answer's score is 0) and pair.
 *
 * <p>Stateless and thread-safe; O(samples) per comparison.
 */
public final class ModelComparison {
    /** Score differences smaller than this are rounding, not change. */
    private static final double SAME = 1e-12;

    private ModelComparison() {
    }

    /**
     * A vignette whose score changed.
     *
     * @param vignetteId the vignette
     * @param baseline   the baseline's mean score over its epochs of it
     * @param other      the other model's
     */
    public record Changed(String vignetteId, double baseline, double other) {
        /** other - baseline. */
        public double difference() {
            return other - baseline;
        }
    }

    /**
     * One model pair compared.
     *
     * @param baselineRun       the baseline's run id
     * @param baselineModel     the baseline model
     * @param run               the other side's run id (the same as baselineRun within one run)
     * @param model             the other model
     * @param baselineVignettes vignettes the baseline has in its figures
     * @param vignettes         vignettes the other model has in its figures
     * @param shared            vignettes paired: in both, with the same prompt and expected answer
     * @param onlyBaseline      vignettes only the baseline has
     * @param onlyOther         vignettes only the other model has
     * @param differing         vignettes both have but asked differently (prompt or expected answer)
     * @param difference        the paired difference, other minus baseline
     * @param changed           the shared vignettes whose score changed, by vignette id
     * @param acrossRuns        true when the two sides are two runs (even two with one id, from two
     *                          databases, or one run at two scorings), false for two models of one run
     * @param baselineScoring   the number of the baseline's scoring, 0 when its run has none
     * @param scoring           the other side's
     * @param baselineScorer    the scorer of the baseline's scores (null when its run records none)
     * @param scorer            the other side's
     * @param metrics           per metric both sides have (lm-eval's multiple-choice metrics, or with
     *                          a group-by key the figure score), the paired difference overall, per
     *                          group and over the groups ({@link MetricComparison}); empty from
     *                          {@link #compare}, filled by {@link #compareAll}
     */
    public record Result(String baselineRun, String baselineModel, String run, String model, int baselineVignettes,
                         int vignettes, int shared, int onlyBaseline, int onlyOther, int differing,
                         PairedDifference difference, List<Changed> changed, boolean acrossRuns,
                         int baselineScoring, int scoring, String baselineScorer, String scorer,
                         List<MetricComparison> metrics) {
        /** Copies changed and metrics. */
        public Result {
            changed = List.copyOf(changed);
            metrics = List.copyOf(metrics);
        }

        /** This comparison with {@code metrics} as its per-metric differences. */
        Result withMetrics(List<MetricComparison> metrics) {
            return new Result(baselineRun, baselineModel, run, model, baselineVignettes, vignettes, shared,
                    onlyBaseline, onlyOther, differing, difference, changed, acrossRuns, baselineScoring, scoring,
                    baselineScorer, scorer, metrics);
        }

        /** Vignettes of either side that were not paired. */
        public int leftOut() {
            return onlyBaseline + onlyOther + differing;
        }

        /**
         * True when the two sides were scored by different scorers: the difference then mixes the
         * models with the scorers.
         */
        public boolean scorersDiffer() {
            return !Objects.equals(baselineScorer, scorer);
        }

        /**
         * How the baseline is named in text: "m-a" within one run, "m-a (run r-1)" across runs,
         * "m-a (run r-1, scoring 1)" for one run at two scorings, and "m-a (run r-1, first)" when
         * both sides have one id and one scoring (two databases).
         */
        public String baselineName() {
            return name(baselineModel, baselineRun, baselineScoring, "first");
        }

        /** As {@link #baselineName()}, for the other side. */
        public String name() {
            return name(model, run, scoring, "second");
        }

        private String name(String model, String runId, int scoringNumber, String side) {
            if (!acrossRuns) {
                return model;
            }
            String which = !run.equals(baselineRun) ? ""
                    : baselineScoring != scoring ? ", scoring " + scoringNumber : ", " + side;
            return model + " (run " + runId + which + ")";
        }
    }

    /**
     * Compares one model of one run with one model of another (or the same) run. The sides are
     * two runs ({@link Result#acrossRuns()}) when the two RunData are different objects.
     *
     * @param baselineRun   the run of the baseline
     * @param baselineModel the baseline model
     * @param run           the run of the other model; may be baselineRun
     * @param model         the other model
     * @return the comparison; with no shared vignette its difference is NaN
     * @throws NullPointerException when an argument is null
     */
    public static Result compare(RunData baselineRun, String baselineModel, RunData run, String model) {
        Pairing pairing = pair(baselineRun, baselineModel, run, model, SampleRow::figureScore);
        List<Changed> changed = new ArrayList<>();
        for (Paired p : pairing.pairs()) {
            if (Math.abs(p.difference()) > SAME) {
                changed.add(new Changed(p.vignetteId(), p.baseline(), p.other()));
            }
        }
        return new Result(baselineRun.info().runId(), baselineModel, run.info().runId(), model,
                pairing.baselineVignettes(), pairing.vignettes(), pairing.pairs().size(), pairing.onlyBaseline(),
                pairing.onlyOther(), pairing.differing(), pairing.difference(), changed, baselineRun != run,
                number(baselineRun), number(run), baselineRun.info().scorer(), run.info().scorer(), List.of());
    }

    /**
     * One shared vignette: each side's mean score over its epochs.
     *
     * @param vignetteId the vignette
     * @param asked      the baseline's first sample of it (its metadata says which group it is in)
     * @param baseline   the baseline's mean score
     * @param other      the other side's
     */
    record Paired(String vignetteId, SampleRow asked, double baseline, double other) {
        double difference() {
            return other - baseline;
        }
    }

    /**
     * The vignettes two sides share under one way of scoring an answer, sorted by vignette id,
     * and the counts of those left out (see the class comment).
     */
    record Pairing(List<Paired> pairs, int baselineVignettes, int vignettes, int onlyBaseline, int onlyOther,
                   int differing) {
        /** The paired difference over every shared vignette, other minus baseline. */
        PairedDifference difference() {
            return PairedDifference.of(pairs.stream().map(Paired::difference).toList());
        }
    }

    /**
     * Pairs two sides' answers, each scored by {@code score}: a sample whose score is null is in
     * no figure; a vignette is shared when both sides have a scored sample of it and asked it
     * with the same prompt and expected answer. The one pairing behind {@link #compare} (the
     * figure score) and {@link MetricComparison} (each multiple-choice metric).
     */
    static Pairing pair(RunData baselineRun, String baselineModel, RunData run, String model,
                        Function<SampleRow, Double> score) {
        Objects.requireNonNull(baselineModel, "baselineModel");
        Objects.requireNonNull(model, "model");
        Map<String, VignetteScore> base = scores(baselineRun, baselineModel, score);
        Map<String, VignetteScore> other = scores(run, model, score);
        List<Paired> pairs = new ArrayList<>();
        int differing = 0;
        int onlyBaseline = 0;
        for (Map.Entry<String, VignetteScore> entry : base.entrySet()) {
            VignetteScore b = entry.getValue();
            VignetteScore o = other.get(entry.getKey());
            if (o == null) {
                onlyBaseline++;
            } else if (!Objects.equals(b.first.prompt(), o.first.prompt())
                    || !Objects.equals(b.first.expected(), o.first.expected())) {
                differing++;
            } else {
                pairs.add(new Paired(entry.getKey(), b.first, b.mean(), o.mean()));
            }
        }
        int onlyOther = 0;
        for (String vignette : other.keySet()) {
            if (!base.containsKey(vignette)) {
                onlyOther++;
            }
        }
        return new Pairing(pairs, base.size(), other.size(), onlyBaseline, onlyOther, differing);
    }

    /**
     * True when the two runs' scores shown come from different scorers, so that a difference
     * between them mixes models and scorers; false for one run (second null).
     */
    public static boolean scorersDiffer(RunData first, RunData second) {
        return second != null && !Objects.equals(first.info().scorer(), second.info().scorer());
    }

    private static int number(RunData run) {
        return run.scoring() == null ? 0 : run.scoring().number();
    }

    /**
     * Every model pair of one run (each model against each later one, in the run's model order),
     * or of two: each model of {@code first} against each model of {@code second}; each with its
     * per-metric differences ({@link MetricComparison}) broken down by the group-by key the runs
     * were made with (the first's, else the second's; a group file's runs record {@code task}).
     *
     * @param first  the baseline run
     * @param second the other run; null to pair the models of {@code first} with each other
     * @return the comparisons; empty when one run has fewer than two models
     * @throws NullPointerException when first is null
     */
    public static List<Result> compareAll(RunData first, RunData second) {
        return compareAll(first, second, null);
    }

    /**
     * As {@link #compareAll(RunData, RunData)}, with the per-metric differences broken down by
     * {@code groupBy} when it is given (not blank), else by the key the runs were made with.
     *
     * @throws NullPointerException when first is null
     */
    public static List<Result> compareAll(RunData first, RunData second, String groupBy) {
        Objects.requireNonNull(first, "first");
        String key = RunStats.groupByOf(first, groupBy);
        if (key == null && second != null) {
            key = RunStats.groupByOf(second, null);
        }
        List<String> baselines = RunStats.modelOrder(first);
        List<Result> results = new ArrayList<>();
        if (second == null) {
            for (int i = 0; i < baselines.size(); i++) {
                for (int j = i + 1; j < baselines.size(); j++) {
                    results.add(compareWithMetrics(first, baselines.get(i), first, baselines.get(j), key));
                }
            }
            return results;
        }
        for (String baseline : baselines) {
            for (String model : RunStats.modelOrder(second)) {
                results.add(compareWithMetrics(first, baseline, second, model, key));
            }
        }
        return results;
    }

    private static Result compareWithMetrics(RunData baselineRun, String baselineModel, RunData run, String model,
                                             String groupBy) {
        return compare(baselineRun, baselineModel, run, model)
                .withMetrics(MetricComparison.of(baselineRun, baselineModel, run, model, groupBy));
    }

    /** Per vignette, the model's scores by {@code score} (null: in no figure), by vignette id. */
    private static Map<String, VignetteScore> scores(RunData run, String model, Function<SampleRow, Double> score) {
        Map<String, VignetteScore> scores = new TreeMap<>();
        for (SampleRow row : run.samples()) {
            if (!row.model().equals(model)) {
                continue;
            }
            Double value = score.apply(row);
            if (value == null) {
                continue;
            }
            VignetteScore v = scores.computeIfAbsent(row.vignetteId(), k -> new VignetteScore(row));
            v.sum += value;
            v.count++;
        }
        return scores;
    }

    /** One side's running total for one vignette, and how it was asked (its first sample). */
    private static final class VignetteScore {
        final SampleRow first;
        double sum;
        int count;

        VignetteScore(SampleRow first) {
            this.first = first;
        }

        double mean() {
            return sum / count;
        }
    }
}
