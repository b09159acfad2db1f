package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class QuarantineTest {
    private static final long SECOND = 1_000_000_000L;
    private final Quarantine quarantine = new Quarantine(SchedulerOptions.defaults()
            .withQuarantine(3, Duration.ofSeconds(30), Duration.ofSeconds(100)));
    private final WorkerHandle gpu7 = worker("gpu-07", 4);

    @Test
    void threeOfAWorkersOwnFailuresInARowQuarantineIt() {
        assertThat(quarantine.strike(gpu7, "404", 0).quarantined()).isFalse();
        assertThat(quarantine.strike(gpu7, "404", 0).quarantined()).isFalse();
        assertThat(quarantine.slotLimit(gpu7)).isEqualTo(4);

        Quarantine.Verdict third = quarantine.strike(gpu7, "404 for model 'llama'", 0);

        assertThat(third.quarantined()).isTrue();
        assertThat(third.strikes()).isEqualTo(3);
        assertThat(third.duration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(quarantine.isQuarantined(gpu7)).isTrue();
        assertThat(quarantine.slotLimit(gpu7)).isZero();
        assertThat(quarantine.nanosToNextRelease(10 * SECOND)).isEqualTo(20 * SECOND);
    }

    @Test
    void aSuccessOrAJobsOwnFailureBreaksTheStreak() {
        quarantine.strike(gpu7, "404", 0);
        quarantine.strike(gpu7, "404", 0);
        quarantine.onSuccess(gpu7);
        quarantine.strike(gpu7, "404", 0);
        quarantine.strike(gpu7, "404", 0);
        quarantine.onJobFailure(gpu7);
        assertThat(quarantine.strike(gpu7, "404", 0).quarantined()).isFalse();
    }

    @Test
    void afterItsQuarantineAWorkerIsOnProbationWithOneSlotAndOneMoreFailureQuarantinesItForLonger() {
        quarantine.strike(gpu7, "404", 0);
        quarantine.strike(gpu7, "404", 0);
        quarantine.strike(gpu7, "404", 0);

        assertThat(quarantine.releaseDue(29 * SECOND)).isEmpty();
        assertThat(quarantine.releaseDue(30 * SECOND)).containsExactly(gpu7);
        assertThat(quarantine.slotLimit(gpu7)).isEqualTo(1);

        Quarantine.Verdict again = quarantine.strike(gpu7, "404", 31 * SECOND);
        assertThat(again.quarantined()).isTrue();
        assertThat(again.duration()).isEqualTo(Duration.ofSeconds(60));

        quarantine.releaseDue(91 * SECOND);
        Quarantine.Verdict third = quarantine.strike(gpu7, "404", 92 * SECOND);
        assertThat(third.duration()).isEqualTo(Duration.ofSeconds(100)); // capped
    }

    @Test
    void oneSuccessOnProbationRestoresTheWholeCapacityAndTheFirstBackoff() {
        for (int i = 0; i < 3; i++) {
            quarantine.strike(gpu7, "404", 0);
        }
        quarantine.releaseDue(30 * SECOND);
        quarantine.onSuccess(gpu7);
        assertThat(quarantine.slotLimit(gpu7)).isEqualTo(4);
        for (int i = 0; i < 3; i++) {
            quarantine.strike(gpu7, "404", 40 * SECOND);
        }
        assertThat(quarantine.nanosToNextRelease(40 * SECOND)).isEqualTo(30 * SECOND);
    }

    @Test
    void failuresOfJobsItHeldWhenQuarantinedAddNothing() {
        for (int i = 0; i < 3; i++) {
            quarantine.strike(gpu7, "404", 0);
        }
        assertThat(quarantine.strike(gpu7, "404", 0).quarantined()).isFalse();
        assertThat(quarantine.nanosToNextRelease(0)).isEqualTo(30 * SECOND);
    }

    @Test
    void theReportNamesEachQuarantinedWorkerWithItsCountAndLastReason() {
        WorkerHandle healthy = worker("gpu-01", 4);
        quarantine.strike(healthy, "refused", 0);
        for (int i = 0; i < 3; i++) {
            quarantine.strike(gpu7, "404 #" + i, 0);
        }
        assertThat(quarantine.report()).containsExactly(new RunReport.Quarantined("gpu-07", 1, "404 #2"));
        assertThat(quarantine.anyQuarantined()).isTrue();
    }

    @Test
    void aWorkerThatReconnectsIsStillQuarantinedAndStillOnProbationAfterwards() {
        WorkerHandle first = worker("gpu-07", 4, "http://gpu-07:8000/v1");
        for (int i = 0; i < 3; i++) {
            quarantine.strike(first, "404", 0);
        }
        WorkerHandle reconnected = worker("gpu-07", 4, "http://gpu-07:8000/v1");
        WorkerHandle otherApi = worker("gpu-07", 4, "http://gpu-08:8000/v1");

        assertThat(quarantine.isQuarantined(reconnected)).as("a new handle of the same worker").isTrue();
        assertThat(quarantine.slotLimit(reconnected)).isZero();
        assertThat(quarantine.isQuarantined(otherApi)).as("the same id behind another model API").isFalse();
        assertThat(quarantine.slotLimit(otherApi)).isEqualTo(4);

        // The listener hears of the end with the handle it heard of the start with.
        assertThat(quarantine.releaseDue(30 * SECOND)).containsExactly(first);
        assertThat(quarantine.slotLimit(reconnected)).as("on probation").isEqualTo(1);
        Quarantine.Verdict again = quarantine.strike(reconnected, "404", 31 * SECOND);
        assertThat(again.quarantined()).as("one strike on probation, whichever connection").isTrue();
        assertThat(again.duration()).isEqualTo(Duration.ofSeconds(60));
        assertThat(quarantine.report()).containsExactly(new RunReport.Quarantined("gpu-07", 2, "404"));
    }

    @Test
    void aJobThatFailedOnAWorkerStillCountsItAsTriedAfterItReconnects() {
        JobState state = new JobState(dev.panoptes.control.TestJobs.job("j", "p"));
        state.failedOn.add(worker("w1", 1, "http://api/v1"));

        assertThat(state.failedOn.contains(worker("w1", 1, "http://api/v1"))).isTrue();
        assertThat(state.failedOn.contains(worker("w1", 1, "http://other/v1"))).isFalse();
        assertThat(state.failedOn.contains(worker("w2", 1, "http://api/v1"))).isFalse();
    }

    private static WorkerHandle worker(String id, int capacity) {
        return worker(id, capacity, null);
    }

    private static WorkerHandle worker(String id, int capacity, String endpoint) {
        return new WorkerHandle() {
            @Override
            public String id() {
                return id;
            }

            @Override
            public String endpoint() {
                return endpoint;
            }

            @Override
            public int capacity() {
                return capacity;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                throw new UnsupportedOperationException();
            }
        };
    }
}
