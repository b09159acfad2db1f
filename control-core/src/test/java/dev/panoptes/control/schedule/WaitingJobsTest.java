package dev.panoptes.control.schedule;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link WaitingJobs#wantedModels()} follows the jobs in and out of both queues. */
class WaitingJobsTest {
    private static JobState job(String model, int n) {
        Vignette v = new Vignette("q" + n, "What is 1+1?", "2", Map.of());
        SpecParams params = new SpecParams("Be brief.", 0.0, 16, 7L, model);
        return new JobState(new Job(JobId.of("run1-m-e0-000" + n), new EvalSpec("s", List.of(v), params), "run1", 0));
    }

    /** Takes the ready jobs of {@code model} as the dispatcher does, through the iterator. */
    private static void take(WaitingJobs waiting, String model) {
        for (Iterator<JobState> it = waiting.ready(); it.hasNext(); ) {
            if (java.util.Objects.equals(it.next().job.model(), model)) {
                it.remove();
            }
        }
    }

    @Test
    void wantedModelsFollowsJobsAddedTakenAndRetriedBack() {
        WaitingJobs waiting = new WaitingJobs();
        JobState a1 = job("a", 1);
        JobState a2 = job("a", 2);
        JobState b1 = job("b", 3);
        JobState any = job(null, 4);
        waiting.add(a1);
        waiting.add(a2);
        waiting.add(b1);
        assertThat(waiting.wantedModels()).containsExactlyInAnyOrder("a", "b");

        take(waiting, "a");
        assertThat(waiting.wantedModels()).containsExactly("b");

        // One of model a comes back after a backoff, one first in line: a is wanted again.
        waiting.delay(a1, 100);
        assertThat(waiting.wantedModels()).containsExactlyInAnyOrder("a", "b");
        waiting.addFirst(a2);
        take(waiting, "a");
        assertThat(waiting.wantedModels()).as("a1 still held back").containsExactlyInAnyOrder("a", "b");

        // Made ready again it still counts once, not twice.
        waiting.promoteDue(100);
        take(waiting, "a");
        assertThat(waiting.wantedModels()).containsExactly("b");

        waiting.add(any);
        take(waiting, "b");
        assertThat(waiting.wantedModels()).containsExactly((String) null);
        waiting.add(b1);
        assertThat(waiting.drain()).containsExactly(any, b1);
        assertThat(waiting.wantedModels()).isEmpty();
        waiting.add(a1);
        assertThat(waiting.wantedModels()).containsExactly("a");
    }

    @Test
    void aJobNeverSentWaitsWithoutAStateAndGetsAFreshOneWhenLookedAt() {
        WaitingJobs waiting = new WaitingJobs();
        Job a = job("a", 1).job;
        Job b = job("b", 2).job;
        waiting.add(a);
        waiting.add(b);
        assertThat(waiting.wantedModels()).containsExactlyInAnyOrder("a", "b");
        assertThat(waiting.readyCount()).isEqualTo(2);

        // Looked at and left (no worker for it): it still waits, first, and its next state is as fresh.
        Iterator<JobState> pass = waiting.ready();
        JobState first = pass.next();
        assertThat(first.job).isSameAs(a);
        assertThat(first.dispatches + first.attempts + first.workerFaults + first.refusalsInARow).isZero();
        JobState second = pass.next();
        pass.remove();
        assertThat(second.job).isSameAs(b);
        assertThat(waiting.wantedModels()).containsExactly("a");

        // Sent and back for a retry: from then on it waits as its own state.
        second.attempts = 1;
        waiting.addFirst(second);
        Iterator<JobState> again = waiting.ready();
        assertThat(again.next()).isSameAs(second);
        assertThat(again.next().job).isSameAs(a);
        assertThat(waiting.drain()).extracting(state -> state.job).containsExactly(b, a);
        assertThat(waiting.wantedModels()).isEmpty();
    }
}
