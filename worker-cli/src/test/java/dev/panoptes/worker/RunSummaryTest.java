package dev.panoptes.worker;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RunSummaryTest {
    @Test
    void countsTokensLatencyPercentilesAndExactMatchAccuracyOverThisRunsRecords() {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            vignettes.add(new Vignette("q" + i, "question " + i, i < 10 ? "yes" : null, Map.of()));
        }
        JobPlan plan = JobPlan.of(new Suite("s", vignettes, "0".repeat(64)), SpecParams.NONE, 10, "");
        InMemoryResultStore store = new InMemoryResultStore();
        // A record of another run in the same store must not count.
        store.record(new JobOutcome(JobId.of("other-run-0000"), List.of(new ResponseRecord("q0", "yes"))), "w");
        for (Job job : plan.jobs()) {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                int n = Integer.parseInt(v.id().substring(1));
                String answer = n < 7 ? " yes\n" : "no";
                records.add(new ResponseRecord(v.id(), answer, "m", "stop", (long) (n + 1) * 10, new Usage(4, 1)));
            }
            store.record(new JobOutcome(job.id(), records), "w");
        }
        RunReport report = new RunReport(2, 0, 2, List.of(), 3, 1, 0, Map.of("w", 2), Duration.ofMillis(1500));

        RunSummary summary = RunSummary.of(plan, report, store);

        assertThat(summary.vignettesStored()).isEqualTo(20);
        assertThat(summary.tokens()).isEqualTo(new Usage(80, 20));
        assertThat(summary.latencyP50Ms()).isEqualTo(100);
        assertThat(summary.latencyP95Ms()).isEqualTo(190);
        assertThat(summary.graded()).isEqualTo(10);
        assertThat(summary.correct()).isEqualTo(7);
        assertThat(summary.allCompleted()).isTrue();
        assertThat(summary.render()).contains("Run complete in 1.5 s")
                .contains("jobs:        2 of 2 complete, 0 failed")
                .contains("vignettes:   20 of 20 stored")
                .contains("redelivered: 1 jobs")
                .contains("tokens:      100 (80 prompt + 20 completion)")
                .contains("latency:     p50 100 ms, p95 190 ms")
                .contains("accuracy:    70.0% exact match (7 of 10)");
    }

    @Test
    void failedJobsAreListedWithTheirReasons() {
        JobPlan plan = JobPlan.of(new Suite("s", List.of(new Vignette("a", "p")), "0".repeat(64)), SpecParams.NONE,
                1, "");
        RunReport report = new RunReport(1, 0, 0,
                List.of(new RunReport.FailedJob(plan.jobs().get(0).id(), "model API answered 400: bad", 1)),
                1, 0, 0, Map.of(), Duration.ofSeconds(1));

        RunSummary summary = RunSummary.of(plan, report, new InMemoryResultStore());

        assertThat(summary.allCompleted()).isFalse();
        assertThat(summary.render()).contains("Run INCOMPLETE").contains("0 of 1 stored, 1 failed")
                .contains("after 1 attempts: model API answered 400: bad")
                .doesNotContain("accuracy").doesNotContain("latency");
    }
}
