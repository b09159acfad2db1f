package dev.panoptes.coordinator;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.report.FailureRow;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunInfo;
import dev.panoptes.report.SampleRow;
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
        // Wilson(0.7, 10) = [0.397, 0.892].
        assertThat(summary.render()).contains("Run complete in 1.5 s (run id " + RUN + ")")
                .contains("jobs:        2 of 2 complete, 0 failed")
                .contains("answers:     20 of 20 stored")
                .contains("redelivered: 1 job;")
                .contains("tokens:      100 spent by this run's model calls (80 prompt + 20 completion)")
                .contains("latency:     p50 100 ms, p95 190 ms per answer")
                .contains("accuracy (exact), mean score per model; 95% CI: Wilson, clustered by vignette:")
                .contains("m: 0.700 (95% CI 0.397-0.892, SE 0.153, n=10); 10 answers unscored")
                .doesNotContain("±");
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

        // a: m = 0.5; residual sums per vignette +1 and -1; SE = sqrt(2/1 * 2) / 4 = 0.5. Epochs agree:
        // deff = 2, n_eff = 2 vignettes; Wilson(0.5, 2) = [0.095, 0.905].
        assertThat(text).contains("a: 0.500 (95% CI 0.095-0.905, SE 0.500, n=4, 2 vignettes)");
        // b: m = 0.75; residual sums q1 1-1.5 = -0.5, q2 2-1.5 = 0.5; SE = sqrt(2 * 0.5) / 4 = 0.25;
        // sum S_g^2 = 0.5 below sum r^2 = 3 * 0.0625 + 0.5625 = 0.75: deff < 1, so n_eff = n = 4.
        assertThat(text).contains("b: 0.750 (95% CI 0.301-0.954, SE 0.250, n=4, 2 vignettes)");
        // Paired: d(q1) = 0.5 - 1 = -0.5, d(q2) = 1 - 0 = 1; mean 0.25, sd = 1.06066, SE = 0.75; t = 1/3 with
        // 1 df: p = 1 - 2 atan(1/3) / pi = 0.795; 0.25 -+ 12.706 * 0.75 is clipped to [-1, 1].
        assertThat(text).contains("paired differences, paired t over vignettes")
                .contains("b - a: +0.250, 95% CI -1.000 to +1.000, SE 0.750, p=0.795, 2 vignettes");
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
        assertThat(summary.render()).contains("Run INCOMPLETE").contains("(run id " + RUN + ")").contains("0 of 1 stored, 1 missing")
                .contains("after 1 attempt: model API answered 400: bad")
                .contains("accuracy:    no answer to score").doesNotContain("latency");
    }

    @Test
    void failedAnswersAreScoredZeroAndTheFigureWithoutThemIsPrintedBeside() {
        List<SampleRow> samples = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            samples.add(sample("m", 0, "q" + i, 1.0, 5L));
        }
        samples.add(new SampleRow(RUN, "m", 0, "q4", RUN + "-job", "question", "yes", "", 0.0,
                "failed answer: model API answered 400", Map.of(), "w", "m", 5L, null, null, null,
                "model API answered 400: context_length_exceeded"));
        RunData data = new RunData(new RunInfo(RUN, "s", List.of("m"), "exact", 1, null, 5), samples, List.of(),
                List.of());
        JobPlan plan = JobPlan.of(new Suite("s", List.of(new Vignette("q0", "p")), "0".repeat(64)), SpecParams.NONE,
                1, "");

        String text = RunSummary.of(plan, new RunReport(1, 0, 1, List.of(), 1, 0, 0, Map.of(), Duration.ofSeconds(1)),
                data, null).render();

        // 4 of 5 with the failed answer as 0: Wilson(0.8, 5) = [0.376, 0.964]; 4 of 4 without: [0.510, 1].
        assertThat(text).contains("m: 0.800 (95% CI 0.376-0.964, SE 0.200, n=5); 1 failed answer scored 0"
                + " (without them: 1.000 (95% CI 0.510-1.000, SE 0.000, n=4))");
    }

    private static SampleRow sample(String model, int epoch, String vignette, Double score, Long latencyMs) {
        return new SampleRow(RUN, model, epoch, vignette, RUN + "-job", "question", score == null ? null : "yes",
                "answer", score, null, Map.of(), "w", model, latencyMs, 4L, 1L, "stop");
    }
}
