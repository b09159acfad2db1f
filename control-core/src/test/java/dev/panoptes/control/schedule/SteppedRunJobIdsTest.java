package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A stepped run (simulations, deterministic tests) refuses two jobs with one id as {@code run}
 * does, before anything is sent: their results would be stored under one key.
 */
class SteppedRunJobIdsTest {
    @Test
    void twoJobsWithOneIdAreRefusedBeforeAnyIsSent() {
        AtomicInteger sent = new AtomicInteger();
        WorkerSet pool = new WorkerSet();
        pool.add(new WorkerHandle() {
            @Override
            public String id() {
                return "w1";
            }

            @Override
            public int capacity() {
                return 4;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                sent.incrementAndGet();
                return new CompletableFuture<>();
            }
        });
        Scheduler scheduler = new Scheduler(pool, new InMemoryResultStore(), SchedulerOptions.defaults());
        List<Job> jobs = List.of(TestJobs.job("j1", "p"), TestJobs.job("j2", "p"), TestJobs.job("j1", "q"));

        assertThatThrownBy(() -> scheduler.start(jobs, () -> 0L))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job id j1 appears more than once in this run");
        assertThat(sent).hasValue(0);
    }
}
