package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EndpointGovernorTest {
    private static final WorkerHandle A1 = worker("a1", "http://api-a/v1");
    private static final WorkerHandle A2 = worker("a2", "http://api-a/v1");
    private static final WorkerHandle B = worker("b", "http://api-b/v1");
    private static final WorkerHandle UNKNOWN = worker("x", null);

    @Test
    void anApiThatNeverThrottledIsNotLimitedAndAWorkerWithoutAnEndpointNeverIs() {
        EndpointGovernor g = new EndpointGovernor(0);
        for (int i = 0; i < 1000; i++) {
            assertThat(g.tryAcquire(A1)).isTrue();
            assertThat(g.tryAcquire(UNKNOWN)).isTrue();
        }
        assertThat(g.state().get("http://api-a/v1").inFlight()).isEqualTo(1000);
        assertThat(g.state()).doesNotContainKey(null);
    }

    @Test
    void aCeilingBoundsEveryWorkerOfOneApiTogetherAndNoOther() {
        EndpointGovernor g = new EndpointGovernor(3);
        assertThat(g.tryAcquire(A1)).isTrue();
        assertThat(g.tryAcquire(A2)).isTrue();
        assertThat(g.tryAcquire(A1)).isTrue();
        assertThat(g.tryAcquire(A2)).as("a fourth job against api-a, from either worker").isFalse();
        assertThat(g.tryAcquire(B)).as("api-b has its own limit").isTrue();

        g.release(A1, true);
        assertThat(g.tryAcquire(A2)).isTrue();
        assertThat(g.state().get("http://api-a/v1").limit()).as("never above the ceiling").isEqualTo(3.0);
    }

    @Test
    void a429CutsTheLimitOnceARoundTripThenEachAnswerGrowsItByOneOverTheLimit() {
        EndpointGovernor g = new EndpointGovernor(0);
        for (int i = 0; i < 40; i++) {
            g.tryAcquire(A1);
        }

        g.onThrottled("http://api-a/v1", 3);
        // No limit yet: 40 in flight, cut to 0.75 x 40 = 30.
        assertThat(g.state().get("http://api-a/v1").limit()).isEqualTo(30.0);
        g.onThrottled("http://api-a/v1", 5);
        assertThat(g.state().get("http://api-a/v1").limit()).as("the 40 sent before the cut say nothing new")
                .isEqualTo(30.0);
        assertThat(g.tryAcquire(A2)).as("40 in flight, limit 30").isFalse();

        // Ten answers: in flight 30, still inside the round trip; the limit grows 1/limit per answer.
        for (int i = 0; i < 10; i++) {
            g.release(A1, true);
        }
        double limit = g.state().get("http://api-a/v1").limit();
        assertThat(limit).isBetween(30.0 + 10 / 30.4, 30.0 + 10 / 30.0);
        assertThat(g.tryAcquire(A2)).as("30 in flight, limit 30.3: a job is admitted only below the limit").isFalse();
        g.release(A1, true);
        assertThat(g.tryAcquire(A2)).as("29 in flight").isTrue();

        // The 40 from before the cut are answered and so is the one sent after it: the round trip is over.
        for (int i = 0; i < 30; i++) {
            g.release(A1, true);
        }
        double before = g.state().get("http://api-a/v1").limit();
        g.onThrottled("http://api-a/v1", 1);
        EndpointGovernor.State st = g.state().get("http://api-a/v1");
        assertThat(st.inFlight()).isZero();
        assertThat(st.limit()).as("cut from the limit, not from the nothing in flight now").isEqualTo(before * 0.75);
        assertThat(st.cuts()).isEqualTo(2);
        assertThat(st.throttled()).isEqualTo(9);
    }

    @Test
    void aLate429WithFewJobsInFlightCutsFromTheLimitNotFromWhatIsInFlight() {
        EndpointGovernor g = new EndpointGovernor(40);
        for (int i = 0; i < 40; i++) {
            g.tryAcquire(A1);
        }
        // The run's tail: 38 answered, then a report of the 429s seen while all 40 were out.
        for (int i = 0; i < 38; i++) {
            g.release(A1, true);
        }

        g.onThrottled("http://api-a/v1", 4);

        assertThat(g.state().get("http://api-a/v1").limit()).as("0.75 x 40, not 0.75 x the 2 in flight")
                .isEqualTo(30.0);
    }

    @Test
    void aCeilingTheFleetNeverReachedIsNotWhatACutStartsFrom() {
        EndpointGovernor g = new EndpointGovernor(1000);
        for (int i = 0; i < 20; i++) {
            g.tryAcquire(A1);
        }

        g.onThrottled("http://api-a/v1", 1);

        assertThat(g.state().get("http://api-a/v1").limit()).as("0.75 x the 20 it had, not x 1000").isEqualTo(15.0);
    }

    @Test
    void aBurstOf429ReportsFromOneEpisodeCutsOnceEvenWithNothingLeftInFlight() {
        EndpointGovernor g = new EndpointGovernor(0);
        for (int i = 0; i < 8; i++) {
            g.tryAcquire(A1);
        }
        for (int i = 0; i < 8; i++) {
            g.release(A1, false);
        }

        // Three workers report the same episode, after its jobs were answered.
        g.onThrottled("http://api-a/v1", 2);
        g.onThrottled("http://api-a/v1", 1);
        g.onThrottled("http://api-a/v1", 3);

        EndpointGovernor.State st = g.state().get("http://api-a/v1");
        assertThat(st.cuts()).isEqualTo(1);
        assertThat(st.limit()).isEqualTo(6.0);
        assertThat(st.throttled()).isEqualTo(6);

        // A job sent after the cut and answered: a 429 now is news.
        assertThat(g.tryAcquire(A1)).isTrue();
        g.release(A1, true);
        g.onThrottled("http://api-a/v1", 1);
        assertThat(g.state().get("http://api-a/v1").cuts()).isEqualTo(2);
    }

    @Test
    void theLimitNeverFallsBelowOneJobPerWorkerBehindTheApi() {
        EndpointGovernor g = new EndpointGovernor(0);
        g.onWorkers(List.of(A1, A2, B, UNKNOWN));
        for (int i = 0; i < 10; i++) {
            g.tryAcquire(i % 2 == 0 ? A1 : A2);
        }
        for (int round = 0; round < 20; round++) {
            g.onThrottled("http://api-a/v1", 1);
            // Round trip: every job in flight answered, one more sent and answered.
            while (g.state().get("http://api-a/v1").inFlight() > 0) {
                g.release(A1, false);
            }
            assertThat(g.tryAcquire(A1)).isTrue();
            g.release(A1, false);
        }

        assertThat(g.state().get("http://api-a/v1").limit()).as("two workers call api-a").isEqualTo(2.0);
        assertThat(g.tryAcquire(A1)).isTrue();
        assertThat(g.tryAcquire(A2)).isTrue();
        assertThat(g.tryAcquire(A1)).isFalse();

        g.onWorkers(List.of(A1, B));
        g.release(A1, false);
        g.release(A2, false);
        assertThat(g.tryAcquire(A1)).isTrue();
        g.release(A1, false);
        g.onThrottled("http://api-a/v1", 1);
        assertThat(g.state().get("http://api-a/v1").limit()).as("one worker left behind api-a: 0.75 x 2")
                .isEqualTo(1.5);
    }

    @Test
    void failuresReleaseTheirSlotWithoutGrowingTheLimit() {
        EndpointGovernor g = new EndpointGovernor(0);
        for (int i = 0; i < 8; i++) {
            g.tryAcquire(A1);
        }
        g.onThrottled("http://api-a/v1", 1);
        assertThat(g.state().get("http://api-a/v1").limit()).isEqualTo(6.0);
        g.release(A1, false);
        assertThat(g.state().get("http://api-a/v1").limit()).isEqualTo(6.0);
        assertThat(g.state().get("http://api-a/v1").inFlight()).isEqualTo(7);
    }

    @Test
    void refusesANegativeCeiling() {
        assertThatThrownBy(() -> new EndpointGovernor(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 (none) or more");
    }

    private static WorkerHandle worker(String id, String endpoint) {
        return new WorkerHandle() {
            @Override
            public String id() {
                return id;
            }

            @Override
            public int capacity() {
                return 1000;
            }

            @Override
            public String endpoint() {
                return endpoint;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                return new CompletableFuture<>();
            }
        };
    }
}
