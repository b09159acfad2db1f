package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A run stepped by hand on its own clock decides exactly when that clock says, and never waits. */
class SteppedRunTest {
    /** A worker whose answers the test gives, one future per dispatch. */
    private static final class HeldWorker implements WorkerHandle {
        final List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
        final List<Job> jobs = new ArrayList<>();

        @Override
        public String id() {
            return "held";
        }

        @Override
        public int capacity() {
            return 1;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
            jobs.add(job);
            replies.add(reply);
            return reply;
        }
    }

    private long nowMs = 5_000;

    @Test
    void aDeadlinePassesExactlyAtTheInjectedTimeAndTheJobGoesAgainInTheSameStep() {
        HeldWorker worker = new HeldWorker();
        WorkerSet pool = new WorkerSet();
        pool.add(worker);
        InMemoryResultStore store = new InMemoryResultStore();
        SchedulerOptions options = SchedulerOptions.defaults().withJobTimeout(Duration.ofMillis(1_000))
                .withSkipCompleted(false);
        Job job = TestJobs.job("j1", "p");
        SteppedRun run = new Scheduler(pool, store, options).start(List.of(job),
                () -> TimeUnit.MILLISECONDS.toNanos(nowMs));

        assertThat(run.step()).isTrue();
        assertThat(worker.replies).hasSize(1);

        nowMs += 999;
        assertThat(run.step()).isTrue();
        assertThat(worker.replies.get(0)).as("one millisecond before its deadline").isNotCancelled();

        nowMs += 1;
        assertThat(run.step()).isTrue();
        assertThat(worker.replies.get(0)).isCancelled();
        assertThat(worker.replies).as("the first redelivery is immediate").hasSize(2);

        worker.replies.get(1).complete(TestJobs.echo(job));
        assertThat(run.step()).as("the answer arrived between steps").isFalse();
        assertThat(run.outstanding()).isZero();
        RunReport report = run.finish();
        assertThat(report.completed()).isEqualTo(1);
        assertThat(report.redeliveries()).isEqualTo(1);
        assertThat(store.recordCount()).isEqualTo(1);
        assertThatThrownBy(run::step).isInstanceOf(IllegalStateException.class);
    }
}
