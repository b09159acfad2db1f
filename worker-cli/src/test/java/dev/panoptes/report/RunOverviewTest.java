package dev.panoptes.report;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RunOverview}: what a run asks for, and its state, also for runs the database never noted. */
class RunOverviewTest {
    private static RunOverview of(String suite, Instant finishedAt) {
        RunInfo info = new RunInfo("r1", suite, List.of("a", "b"), "exact", 3, Instant.EPOCH, 2, null, finishedAt,
                null, List.of());
        return RunOverview.of(new RunData(info, List.of(), List.of(), List.of()));
    }

    @Test
    void aNotedRunAsksForVignettesTimesModelsTimesEpochsAndIsCompleteOnlyWithAllOfThem() {
        RunOverview run = of("s.jsonl", Instant.EPOCH);
        assertThat(run.expected()).isEqualTo(12);
        assertThat(run.stored()).isZero();
        assertThat(run.models()).containsExactly("a", "b");
        assertThat(run.state(false)).isEqualTo(RunOverview.State.INCOMPLETE);
        assertThat(run.state(true).label()).isEqualTo("running");
    }

    @Test
    void aRunNeverNotedAsksForAnUnknownNumberAndIsCompleteWhenItFinished() {
        assertThat(of(null, null).expected()).isEqualTo(-1);
        assertThat(of(null, null).state(false)).isEqualTo(RunOverview.State.INCOMPLETE);
        assertThat(of(null, Instant.EPOCH).state(false).label()).isEqualTo("complete");
    }
}
