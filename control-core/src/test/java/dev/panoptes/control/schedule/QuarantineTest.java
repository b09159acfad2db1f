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

    private static WorkerHandle worker(String id, int capacity) {
        return new WorkerHandle() {
            @Override
            public String id() {
                return id;
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
