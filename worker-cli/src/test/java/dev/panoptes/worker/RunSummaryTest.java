package dev.panoptes.worker;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.worker.report.FailureRow;
import dev.panoptes.worker.report.RunData;
import dev.panoptes.worker.report.RunInfo;
import dev.panoptes.worker.report.SampleRow;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RunSummaryTest {
    private static final String RUN = "0123456789abcdef";

    @Test
    void countsTokensLatencyPercentilesAndAccuracyPerModelWithItsInterval() {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            vignettes.add(new Vignette("q" + i, "question " + i, i < 10 ? "yes" : null, Map.of()));
        }
        JobPlan plan = JobPlan.of(new Suite("s", vignettes, "0".repeat(64)), SpecParams.NONE, 10, "");
        List<SampleRow> samples = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            // Vignettes with an expected answer are scored: 7 of the 10 right.
            Double score = i < 10 ? (i < 7 ? 1.0 : 0.0) : null;
            samples.add(sample("m", 0, "q" + i, score, (long) (i + 1) * 10));
        }
        RunData data = new RunData(new RunInfo(RUN, "s.jsonl", List.of("m"), "exact", 1, null, 20), samples, List.of(),
                List.of());
        RunReport report = new RunReport(2, 0, 2, List.of(), 3, 1, 0, Map.of("w", 2), Duration.ofMillis(1500));

        RunSummary summary = RunSummary.of(plan, report, data, null);

        assertThat(summary.answersStored()).isEqualTo(20);
        assertThat(summary.tokens()).isEqualTo(new Usage(80, 20));
        assertThat(summary.latencyP50Ms()).isEqualTo(100);
        assertThat(summary.latencyP95Ms()).isEqualTo(190);
        assertThat(summary.allCompleted()).isTrue();
        // 7 of 10: mean 0.7, s = sqrt(7*0.09 + 3*0.49) / 3 = sqrt(2.1/9) = 0.48305, SE = s / sqrt(10) = 0.15275,
        // 95 % CI 0.7 -+ 1.95996 * 0.15275 = 0.401 .. 0.999.
        assertThat(summary.render()).contains("Run complete in 1.5 s (run id " + RUN + ")")
                .contains("jobs:        2 of 2 complete, 0 failed")
                .contains("answers:     20 of 20 stored")
                .contains("redelivered: 1 job;")
                .contains("tokens:      100 (80 prompt + 20 completion)")
                .contains("latency:     p50 100 ms, p95 190 ms")
                .contains("accuracy (exact), mean score with its 95% confidence interval:")
                .contains("m: 0.700 ± 0.153 (95% CI 0.401-0.999, n=10); 10 answers unscored");
    }

    @Test
    void epochsClusterByVignetteAndTwoModelsAreComparedPairedByVignette() {
        List<SampleRow> samples = new ArrayList<>();
        // Model a: q1 right in both epochs, q2 wrong in both; model b: q1 right once, q2 right both times.
        samples.add(sample("a", 0, "q1", 1.0, 5L));
        samples.add(sample("a", 1, "q1", 1.0, 5L));
        samples.add(sample("a", 0, "q2", 0.0, 5L));
        samples.add(sample("a", 1, "q2", 0.0, 5L));
        samples.add(sample("b", 0, "q1", 1.0, 5L));
        samples.add(sample("b", 1, "q1", 0.0, 5L));
        samples.add(sample("b", 0, "q2", 1.0, 5L));
        samples.add(sample("b", 1, "q2", 1.0, 5L));
        RunData data = new RunData(new RunInfo(RUN, "s", List.of("a", "b"), "normalized", 2, null, 2), samples,
                List.of(), List.of());
        JobPlan plan = JobPlan.of(new Suite("s", List.of(new Vignette("q1", "p"), new Vignette("q2", "p")),
                "0".repeat(64)), SpecParams.NONE, 2, "", List.of("a", "b"), 2);

        String text = RunSummary.of(plan, new RunReport(4, 0, 4, List.of(), 4, 0, 0, Map.of(), Duration.ofSeconds(1)),
                data, null).render();

        // a: m = 0.5; residual sums per vignette +1 and -1; SE = sqrt(2/1 * 2) / 4 = 0.5; CI clamped to 0..1.
        assertThat(text).contains("a: 0.500 ± 0.500 (95% CI 0.000-1.000, n=4, 2 vignettes)");
        // b: m = 0.75; residuals q1 1-1.5 = -0.5, q2 2-1.5 = 0.5; SE = sqrt(2 * 0.5) / 4 = 0.25.
        assertThat(text).contains("b: 0.750 ± 0.250 (95% CI 0.260-1.000, n=4, 2 vignettes)");
        // Paired: d(q1) = 0.5 - 1 = -0.5, d(q2) = 1 - 0 = 1; mean 0.25, sd = 1.06066, SE = 0.75.
        assertThat(text).contains("b - a: +0.250 ± 0.750 (paired over 2 vignettes)");
    }

    @Test
    void failedJobsAreListedWithTheirReasons() {
        JobPlan plan = JobPlan.of(new Suite("s", List.of(new Vignette("a", "p")), "0".repeat(64)), SpecParams.NONE,
                1, "");
        RunReport report = new RunReport(1, 0, 0,
                List.of(new RunReport.FailedJob(plan.jobs().get(0).id(), "model API answered 400: bad", 1)),
                1, 0, 0, Map.of(), Duration.ofSeconds(1));
        RunData data = new RunData(new RunInfo(RUN, "s", List.of("m"), "exact", 1, null, 1), List.of(),
                List.of(new FailureRow(RUN, plan.jobs().get(0).id().value(), "m", "model API answered 400: bad", 1)),
                List.of());

        RunSummary summary = RunSummary.of(plan, report, data, null);

        assertThat(summary.allCompleted()).isFalse();
        assertThat(summary.render()).contains("Run INCOMPLETE").contains("(run id " + RUN + ")").contains("0 of 1 stored, 1 failed")
                .contains("after 1 attempt: model API answered 400: bad")
                .contains("accuracy:    no answer to score").doesNotContain("latency");
    }

    private static SampleRow sample(String model, int epoch, String vignette, Double score, Long latencyMs) {
        return new SampleRow(RUN, model, epoch, vignette, RUN + "-job", "question", score == null ? null : "yes",
                "answer", score, null, Map.of(), "w", model, latencyMs, 4L, 1L, "stop");
    }
}
