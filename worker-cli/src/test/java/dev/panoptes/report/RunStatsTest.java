package dev.panoptes.report;

import dev.panoptes.control.stats.Estimate;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The figures of {@link ReportFixtures#run()}, worked out by hand in that class's comment. */
class RunStatsTest {
    private static final double EPS = 1e-12;

    private final RunStats stats = RunStats.of(ReportFixtures.run(), "topic");

    @Test
    void listsTheRunsModelsInOrderThenModelsSeenOnlyInSamples() {
        assertThat(stats.models()).extracting(RunStats.ModelStats::model).containsExactly("m-a", "m-b", "m-c");
        assertThat(stats.totalSamples()).isEqualTo(13);
        assertThat(stats.totalFailures()).isEqualTo(1);
    }

    @Test
    void countsSamplesScoredAndUnscoredPerModel() {
        assertThat(model("m-a").samples()).isEqualTo(6);
        assertThat(model("m-a").scored()).isEqualTo(6);
        assertThat(model("m-c").samples()).isEqualTo(1);
        assertThat(model("m-c").scored()).isZero();
        assertThat(model("m-c").unscored()).isEqualTo(1);
        assertThat(model("m-c").accuracy()).isEqualTo(Estimate.empty());
    }

    @Test
    void estimatesAccuracyWithStandardErrorsClusteredByVignette() {
        Estimate a = model("m-a").accuracy();
        assertThat(a.mean()).isCloseTo(0.5, within(EPS));
        assertThat(a.standardError()).isCloseTo(Math.sqrt(3) / 6, within(EPS));
        assertThat(a.n()).isEqualTo(6);
        assertThat(a.clusters()).isEqualTo(3);
        assertThat(a.clustered()).isTrue();
        // sum S_g^2 = 2, sum r^2 = 6 * 0.25 = 1.5: deff = 4/3, n_eff = 4.5; Wilson(0.5, 4.5) = [0.161, 0.839]
        assertThat(a.effectiveN()).isCloseTo(4.5, within(EPS));
        assertThat(Figures.ratio(a.ciLow())).isEqualTo("0.161");
        assertThat(Figures.ratio(a.ciHigh())).isEqualTo("0.839");

        Estimate b = model("m-b").accuracy();
        assertThat(b.mean()).isCloseTo(5.0 / 6, within(EPS));
        assertThat(b.standardError()).isCloseTo(1.0 / 6, within(EPS));
        assertThat(Figures.ratio(b.mean())).isEqualTo("0.833");
        assertThat(Figures.ratio(b.standardError())).isEqualTo("0.167");
        // sum S_g^2 = 2/3, sum r^2 = 5/36 + 25/36 = 5/6: deff < 1, so n_eff = n = 6; Wilson(5/6, 6) low 0.436
        assertThat(Figures.ratio(b.ciLow())).isEqualTo("0.436");
    }

    @Test
    void breaksAccuracyDownByTheGroupByKeyWithMissingValuesUnderNone() {
        Map<String, Estimate> a = model("m-a").byGroup();
        assertThat(a).containsOnlyKeys(RunStats.NO_GROUP, "geo");
        assertThat(a.get("geo").mean()).isCloseTo(0.75, within(EPS));
        assertThat(a.get("geo").standardError()).isCloseTo(0.25, within(EPS));
        assertThat(a.get("geo").clusters()).isEqualTo(2);
        assertThat(a.get(RunStats.NO_GROUP).mean()).isZero();
        assertThat(a.get(RunStats.NO_GROUP).hasStandardError()).as("one vignette: no spread").isFalse();
        assertThat(a.get(RunStats.NO_GROUP).effectiveN()).as("one vignette counts once").isEqualTo(1.0);

        Map<String, Estimate> b = model("m-b").byGroup();
        assertThat(b.get("geo").mean()).isEqualTo(1.0);
        assertThat(b.get("geo").standardError()).isZero();
        assertThat(b.get(RunStats.NO_GROUP).mean()).isCloseTo(0.5, within(EPS));
        assertThat(model("m-c").byGroup()).as("unscored samples are in no group").isEmpty();
    }

    @Test
    void rendersGroupValuesAsStrings() {
        RunStats byLevel = RunStats.of(ReportFixtures.run(), "level");
        assertThat(byLevel.model("m-a").orElseThrow().byGroup()).containsOnlyKeys("3", RunStats.NO_GROUP);
    }

    @Test
    void hasNoGroupsWithoutAGroupByKey() {
        RunStats plain = RunStats.of(ReportFixtures.run(), null);
        assertThat(plain.groupBy()).isNull();
        assertThat(plain.models()).allSatisfy(m -> assertThat(m.byGroup()).isEmpty());
        assertThat(RunStats.of(ReportFixtures.run(), " ").groupBy()).isNull();
    }

    @Test
    void totalsTokensAndFailuresPerModel() {
        assertThat(model("m-a").promptTokens()).isEqualTo(60);
        assertThat(model("m-a").completionTokens()).isEqualTo(12);
        assertThat(model("m-b").promptTokens()).as("one sample reported no usage").isEqualTo(50);
        assertThat(model("m-b").completionTokens()).isEqualTo(10);
        assertThat(model("m-a").failures()).isEqualTo(1);
        assertThat(model("m-b").failures()).isZero();
    }

    @Test
    void summarisesWorkersSortedByIdWithNearestRankLatencyPercentiles() {
        assertThat(stats.workers()).containsExactly(
                new RunStats.WorkerStats(RunStats.UNKNOWN_WORKER, 1, 1, 0, 0, null, null),
                new RunStats.WorkerStats("w-1", 6, 6, 0, 0, 300L, 600L),
                new RunStats.WorkerStats("w-2", 6, 6, 2, 1, 30L, 50L),
                new RunStats.WorkerStats("w-3", 0, 0, 1, 1, null, null));
    }

    @Test
    void countsDistinctJobsPerWorker() {
        SampleRow first = ReportFixtures.run().samples().get(0);
        SampleRow retry = new SampleRow(first.runId(), first.model(), first.epoch(), first.vignetteId(), first.jobId(),
                first.prompt(), first.expected(), first.response(), first.score(), first.explanation(),
                first.metadata(), first.workerId(), first.apiModel(), 700L, null, null, null);
        RunData run = new RunData(ReportFixtures.run().info(), List.of(first, retry), List.of(), List.of());

        RunStats.WorkerStats w1 = RunStats.of(run, null).workers().get(0);

        assertThat(w1.jobs()).isEqualTo(1);
        assertThat(w1.samples()).isEqualTo(2);
        assertThat(w1.latencyP50Ms()).isEqualTo(100L);
        assertThat(w1.latencyP95Ms()).isEqualTo(700L);
    }

    @Test
    void takesNearestRankPercentiles() {
        List<Long> sorted = List.of(10L, 20L, 30L, 40L);
        assertThat(RunStats.WorkerStats.nearestRank(sorted, 50)).isEqualTo(20L);
        assertThat(RunStats.WorkerStats.nearestRank(sorted, 95)).isEqualTo(40L);
        assertThat(RunStats.WorkerStats.nearestRank(List.of(7L), 50)).isEqualTo(7L);
        assertThat(RunStats.WorkerStats.nearestRank(List.of(), 50)).isNull();
    }

    @Test
    void comparesEachModelWithTheFirstPairedOverSharedVignettes() {
        assertThat(stats.comparison()).hasSize(2);
        RunStats.Comparison b = stats.comparison().get(0);
        assertThat(b.baseline()).isEqualTo("m-a");
        assertThat(b.model()).isEqualTo("m-b");
        assertThat(b.sharedVignettes()).isEqualTo(3);
        assertThat(b.difference()).isCloseTo(1.0 / 3, within(EPS));
        assertThat(b.standardError()).isCloseTo(1.0 / 6, within(EPS));

        RunStats.Comparison c = stats.comparison().get(1);
        assertThat(c.model()).isEqualTo("m-c");
        assertThat(c.sharedVignettes()).as("m-c scored nothing").isZero();
        assertThat(c.difference()).isNaN();
        assertThat(c.standardError()).isNaN();
    }

    @Test
    void hasADifferenceButNoStandardErrorWithOneSharedVignette() {
        List<SampleRow> samples = ReportFixtures.run().samples().stream()
                .filter(s -> s.vignetteId().equals("v2") && !s.model().equals("m-c"))
                .toList();
        RunData run = new RunData(ReportFixtures.run().info(), samples, List.of(), List.of());

        RunStats.Comparison c = RunStats.of(run, null).comparison().get(0);

        assertThat(c.sharedVignettes()).isEqualTo(1);
        assertThat(c.difference()).isCloseTo(0.5, within(EPS)); // m-b 1.0 vs m-a 0.5
        assertThat(c.standardError()).isNaN();
    }

    @Test
    void hasNoComparisonWithOneModel() {
        RunInfo info = new RunInfo("solo", "s", List.of("m-a"), null, 1, null, 0);
        assertThat(RunStats.of(new RunData(info, List.of(), List.of(), List.of()), null).comparison()).isEmpty();
    }

    @Test
    void treatsANonFiniteScoreAsUnscored() {
        SampleRow first = ReportFixtures.run().samples().get(0);
        SampleRow nan = new SampleRow(first.runId(), "m-a", 1, "v1", "j", null, null, null, Double.NaN, null, null,
                "w", null, null, null, null, null);
        RunStats.ModelStats a = RunStats.of(new RunData(ReportFixtures.run().info(), List.of(nan), null, null), null)
                .model("m-a").orElseThrow();
        assertThat(a.unscored()).isEqualTo(1);
        assertThat(a.accuracy().n()).isZero();
    }

    private RunStats.ModelStats model(String name) {
        return stats.model(name).orElseThrow();
    }

    @Test
    void failedAnswersCountAsWrongAndTheFigureWithoutThemIsGivenToo() {
        // m: q1 right, q2 wrong, q3 and q4 failed (q3's stored score 0, q4's none): 1 of 4 in the figure,
        // 1 of 2 without the failed answers.
        RunData run = ModelComparisonTest.run("r", "m", List.of(
                ModelComparisonTest.row("r", "m", "q1", "p1", "e", 1.0, null),
                ModelComparisonTest.row("r", "m", "q2", "p2", "e", 0.0, null),
                ModelComparisonTest.row("r", "m", "q3", "p3", "e", 0.0, "content filter"),
                ModelComparisonTest.row("r", "m", "q4", "p4", "e", null, "context_length_exceeded"),
                ModelComparisonTest.row("r", "m", "q5", "p5", null, null, null)));

        RunStats.ModelStats m = RunStats.of(run, null).models().get(0);

        assertThat(m.failedAnswers()).isEqualTo(2);
        assertThat(m.scored()).isEqualTo(4);
        assertThat(m.unscored()).isEqualTo(1);
        assertThat(m.accuracy().n()).isEqualTo(4);
        assertThat(m.accuracy().mean()).isEqualTo(0.25);
        assertThat(m.withoutFailed().n()).isEqualTo(2);
        assertThat(m.withoutFailed().mean()).isEqualTo(0.5);
    }
}
