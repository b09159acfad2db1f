package dev.panoptes.report;

import dev.panoptes.control.stats.PairedDifference;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ModelComparisonTest {
    private static final double EPS = 1e-12;

    @Test
    void pairsTwoModelsOfOneRunByVignetteAndListsWhatChanged() {
        // ReportFixtures: m-a (1,1) (1,0) (0,0), m-b (1,1) (1,1) (1,0): d = 0, 0.5, 0.5 (see PairedDifferenceTest).
        ModelComparison.Result r = ModelComparison.compare(ReportFixtures.run(), "m-a", ReportFixtures.run(), "m-b");

        assertThat(r.shared()).isEqualTo(3);
        assertThat(r.leftOut()).isZero();
        assertThat(r.difference()).isEqualTo(PairedDifference.of(List.of(0.0, 0.5, 0.5)));
        assertThat(r.changed()).containsExactly(new ModelComparison.Changed("v2", 0.5, 1.0),
                new ModelComparison.Changed("v3", 0.0, 0.5));
        assertThat(r.acrossRuns()).as("two RunData objects are two runs").isTrue();

        RunData run = ReportFixtures.run();
        List<ModelComparison.Result> all = ModelComparison.compareAll(run, null);
        // m-a, m-b and m-c (seen in the samples): three pairs, each model against each later one.
        assertThat(all).extracting(c -> c.baselineModel() + "/" + c.model())
                .containsExactly("m-a/m-b", "m-a/m-c", "m-b/m-c");
        assertThat(all.get(0).acrossRuns()).isFalse();
        assertThat(all.get(0).name()).isEqualTo("m-b");
        // m-c's only sample is unscored: it shares nothing, and says so.
        assertThat(all.get(1).shared()).isZero();
        assertThat(all.get(1).onlyBaseline()).isEqualTo(3);
        assertThat(all.get(1).difference().format()).isEqualTo("no shared vignettes");
    }

    @Test
    void acrossRunsLeavesOutVignettesAskedDifferentlyOrByOneSideAndCountsFailedAnswersAsWrong() {
        RunData before = run("r-1", "m", List.of(
                row("r-1", "m", "q1", "2+2?", "4", 1.0, null),
                row("r-1", "m", "q2", "3+3?", "6", 1.0, null),
                row("r-1", "m", "q3", "Capital of France?", "Paris", 1.0, null),
                row("r-1", "m", "q4", "old question", "x", 0.0, null),
                row("r-1", "m", "q5", "only before", "y", 1.0, null)));
        RunData after = run("r-2", "m", List.of(
                row("r-2", "m", "q1", "2+2?", "4", 1.0, null),
                row("r-2", "m", "q1", "2+2?", "4", 0.0, null),
                // A failed answer: its stored score is null, and it still counts 0.
                row("r-2", "m", "q2", "3+3?", "6", null, "model API answered 400: context_length_exceeded"),
                row("r-2", "m", "q3", "Capital of France?", "Paris", 1.0, null),
                row("r-2", "m", "q4", "new question, same id", "x", 1.0, null),
                row("r-2", "m", "q6", "only after", "z", 1.0, null)));

        ModelComparison.Result r = ModelComparison.compare(before, "m", after, "m");

        assertThat(r.baselineVignettes()).isEqualTo(5);
        assertThat(r.vignettes()).isEqualTo(5);
        assertThat(r.shared()).isEqualTo(3);
        assertThat(r.differing()).isEqualTo(1);
        assertThat(r.onlyBaseline()).isEqualTo(1);
        assertThat(r.onlyOther()).isEqualTo(1);
        assertThat(r.leftOut()).isEqualTo(3);
        // d(q1) = 0.5 - 1, d(q2) = 0 - 1, d(q3) = 0
        assertThat(r.difference().difference()).isCloseTo(-0.5, within(EPS));
        assertThat(r.changed()).extracting(ModelComparison.Changed::vignetteId).containsExactly("q1", "q2");
        assertThat(r.baselineName()).isEqualTo("m (run r-1)");
        assertThat(r.name()).isEqualTo("m (run r-2)");
    }

    @Test
    void twoRunsWithOneIdAreNamedFirstAndSecond() {
        RunData a = run("r", "m", List.of(row("r", "m", "q1", "p", "e", 1.0, null)));
        RunData b = run("r", "m", List.of(row("r", "m", "q1", "p", "e", 0.0, null)));

        ModelComparison.Result r = ModelComparison.compareAll(a, b).get(0);

        assertThat(r.baselineName()).isEqualTo("m (run r, first)");
        assertThat(r.name()).isEqualTo("m (run r, second)");
        assertThat(r.difference().hasInterval()).as("one vignette has no spread").isFalse();
    }

    @Test
    void withAGroupByKeyARunWithoutChoiceAnswersHasItsScoresBrokenDownByGroupAndWithoutOneNoMetrics() {
        RunData run = ReportFixtures.run();
        assertThat(ModelComparison.compareAll(run, null).get(0).metrics()).as("no choice answers, no key").isEmpty();

        // m-b - m-a: d(v1) = 0, d(v2) = 0.5 (topic geo), d(v3) = 0.5 (no topic).
        MetricComparison m = ModelComparison.compareAll(run, null, "topic").get(0).metrics().get(0);
        assertThat(m.metric()).as("named after the scorer both sides share").isEqualTo("exact");
        assertThat(m.groupBy()).isEqualTo("topic");
        assertThat(m.difference()).isEqualTo(PairedDifference.of(List.of(0.0, 0.5, 0.5)));
        assertThat(m.groups()).containsExactly(
                new MetricComparison.Group(RunStats.NO_GROUP, PairedDifference.of(List.of(0.5))),
                new MetricComparison.Group("geo", PairedDifference.of(List.of(0.0, 0.5))));
        // Each group counted once: (0.5 + 0.25) / 2; one group of one vignette leaves it without interval.
        assertThat(m.groupMean().difference()).isCloseTo(0.375, within(EPS));
        assertThat(m.groupMean().hasInterval()).isFalse();
        assertThat(m.groupMean().vignettes()).isEqualTo(3);
    }

    static RunData run(String id, String model, List<SampleRow> rows) {
        return new RunData(new RunInfo(id, "s.jsonl", List.of(model), "exact", 1, null, rows.size()),
                new ArrayList<>(rows), List.of(), List.of());
    }

    static SampleRow row(String run, String model, String vignette, String prompt, String expected, Double score,
                         String error) {
        return new SampleRow(run, model, 1, vignette, run + "-job", prompt, expected, error == null ? "answer" : "",
                score, null, Map.of(), "w", model, 5L, 1L, 1L, "stop", error);
    }
}
