package dev.panoptes.report;

import dev.panoptes.control.stats.PairedDifference;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

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
     */
    public record Result(String baselineRun, String baselineModel, String run, String model, int baselineVignettes,
                         int vignettes, int shared, int onlyBaseline, int onlyOther, int differing,
                         PairedDifference difference, List<Changed> changed, boolean acrossRuns,
                         int baselineScoring, int scoring, String baselineScorer, String scorer) {
        /** Copies changed. */
        public Result {
            changed = List.copyOf(changed);
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
        Objects.requireNonNull(baselineModel, "baselineModel");
        Objects.requireNonNull(model, "model");
        Map<String, VignetteScore> base = scores(baselineRun, baselineModel);
        Map<String, VignetteScore> other = scores(run, model);
        List<Double> differences = new ArrayList<>();
        List<Changed> changed = new ArrayList<>();
        int differing = 0;
        int onlyBaseline = 0;
        for (Map.Entry<String, VignetteScore> entry : base.entrySet()) {
            VignetteScore b = entry.getValue();
            VignetteScore o = other.get(entry.getKey());
            if (o == null) {
                onlyBaseline++;
            } else if (!Objects.equals(b.prompt, o.prompt) || !Objects.equals(b.expected, o.expected)) {
                differing++;
            } else {
                double d = o.mean() - b.mean();
                differences.add(d);
                if (Math.abs(d) > SAME) {
                    changed.add(new Changed(entry.getKey(), b.mean(), o.mean()));
                }
            }
        }
        int onlyOther = 0;
        for (String vignette : other.keySet()) {
            if (!base.containsKey(vignette)) {
                onlyOther++;
            }
        }
        return new Result(baselineRun.info().runId(), baselineModel, run.info().runId(), model, base.size(),
                other.size(), differences.size(), onlyBaseline, onlyOther, differing,
                PairedDifference.of(differences), changed, baselineRun != run, number(baselineRun), number(run),
                baselineRun.info().scorer(), run.info().scorer());
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
     * or of two: each model of {@code first} against each model of {@code second}.
     *
     * @param first  the baseline run
     * @param second the other run; null to pair the models of {@code first} with each other
     * @return the comparisons; empty when one run has fewer than two models
     */
    public static List<Result> compareAll(RunData first, RunData second) {
        Objects.requireNonNull(first, "first");
        List<String> baselines = RunStats.modelOrder(first);
        List<Result> results = new ArrayList<>();
        if (second == null) {
            for (int i = 0; i < baselines.size(); i++) {
                for (int j = i + 1; j < baselines.size(); j++) {
                    results.add(compare(first, baselines.get(i), first, baselines.get(j)));
                }
            }
            return results;
        }
        for (String baseline : baselines) {
            for (String model : RunStats.modelOrder(second)) {
                results.add(compare(first, baseline, second, model));
            }
        }
        return results;
    }

    /** Per vignette, the model's figure scores (failed answers as 0), by vignette id. */
    private static Map<String, VignetteScore> scores(RunData run, String model) {
        Map<String, VignetteScore> scores = new TreeMap<>();
        for (SampleRow row : run.samples()) {
            Double score = row.figureScore();
            if (score == null || !row.model().equals(model)) {
                continue;
            }
            VignetteScore v = scores.computeIfAbsent(row.vignetteId(), k -> new VignetteScore(row.prompt(),
                    row.expected()));
            v.sum += score;
            v.count++;
        }
        return scores;
    }

    /** One side's running total for one vignette, and how it was asked (from its first sample). */
    private static final class VignetteScore {
        final String prompt;
        final String expected;
        double sum;
        int count;

        VignetteScore(String prompt, String expected) {
            this.prompt = prompt;
            this.expected = expected;
        }

        double mean() {
            return sum / count;
        }
    }
}
