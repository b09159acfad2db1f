package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.local.LocalPool;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The scheduler asks its {@link DispatchGate} before every dispatch and releases every slot once. */
class DispatchGateTest {
    private final LocalPool pool = new LocalPool();

    @AfterEach
    void close() {
        pool.close();
    }

    @Test
    void noMoreJobsAreInFlightThanTheGateAllowsAcrossAllWorkersAndEverySlotIsReleased() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        for (String id : List.of("w1", "w2", "w3")) {
            pool.start(id, 4, job -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    // A job that takes a moment, so that several would overlap without the gate.
                    new java.util.concurrent.CountDownLatch(1).await(5, java.util.concurrent.TimeUnit.MILLISECONDS);
                    return TestJobs.echo(job);
                } finally {
                    running.decrementAndGet();
                }
            });
        }
        CountingGate gate = new CountingGate(2);
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(TestJobs.job("j" + i, "p"));
        }

        RunReport report = new Scheduler(pool, new InMemoryResultStore(), SchedulerOptions.defaults()
                .withPollInterval(Duration.ofMillis(10)).withGate(gate)).run(jobs);

        assertThat(report.completed()).isEqualTo(40);
        assertThat(most.get()).as("jobs running at once, 12 slots but a gate of 2").isLessThanOrEqualTo(2);
        assertThat(gate.acquired).isEqualTo(40);
        assertThat(gate.released).isEqualTo(40);
        assertThat(gate.succeeded).isEqualTo(40);
        assertThat(gate.lastWorkers).as("the gate is shown the workers it governs")
                .extracting(WorkerHandle::id).containsExactlyInAnyOrder("w1", "w2", "w3");
    }

    /** Allows {@code limit} in flight; counts what the scheduler did. Scheduler thread only. */
    private static final class CountingGate implements DispatchGate {
        private final int limit;
        private int inFlight;
        int acquired;
        int released;
        int succeeded;
        List<WorkerHandle> lastWorkers = List.of();

        CountingGate(int limit) {
            this.limit = limit;
        }

        @Override
        public void onWorkers(List<WorkerHandle> workers) {
            lastWorkers = workers;
        }

        @Override
        public boolean tryAcquire(WorkerHandle worker) {
            if (inFlight >= limit) {
                return false;
            }
            inFlight++;
            acquired++;
            return true;
        }

        @Override
        public void release(WorkerHandle worker, boolean ok) {
            inFlight--;
            released++;
            if (ok) {
                succeeded++;
            }
        }
    }
}
