package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.StoredRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler cannot tell remote workers from local ones: it runs a few hundred jobs over a
 * {@link SharedPool} of fake remote workers, one of which dies mid-run holding jobs, and every
 * job still ends stored exactly once.
 */
class SchedulerOverRemoteWorkersTest {
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    @Test
    void everyJobIsStoredExactlyOnceWhenAWorkerDiesMidRun() throws Exception {
        runWithADoomedWorker(false);
    }

    /**
     * With direct completions the scheduler decides on the selector thread that read the answers
     * whenever its turn is free: the doomed worker's last answer and its close come in together,
     * so the dispatches that answer frees race the close of the connection they may go to, on
     * that same thread. Every job still ends stored exactly once, and the selector threads did
     * dispatch.
     */
    @Test
    void everyJobIsStoredExactlyOnceWhenAWorkerDiesMidRunWhileSelectorsDecide() throws Exception {
        Map<String, Integer> dispatchesByThread = runWithADoomedWorker(true);
        assertThat(dispatchesByThread.keySet()).as("%s", dispatchesByThread).anyMatch(t -> t.contains("-io-"));
    }

    /** Runs 300 jobs over three steady workers and one that dies mid-run; returns dispatches per thread name. */
    private Map<String, Integer> runWithADoomedWorker(boolean direct) throws Exception {
        TestCoordinator coordinator = closeLater(TestCoordinator.start(b -> b.directCompletions(direct)));
        AtomicInteger answeredByDoomed = new AtomicInteger();
        FakeWorker doomed = closeLater(FakeWorker.register(coordinator.address(), "doomed", 4));
        doomed.serve((worker, job) -> {
            // Answers its first jobs, then drops its socket while holding the next ones. With direct
            // completions the 1st answer is followed by the close at once, so that the two often
            // come in one read of the coordinator: the dispatches the answer frees race the close.
            // Only jobs of the run's first dispatch round, which fills every free slot (its 4 among
            // them), are sure to come: a later job may never, since under load the steady workers
            // can finish the run before this one's first answer is read (it then never closed).
            int n = answeredByDoomed.incrementAndGet();
            int last = direct ? 1 : 2;
            if (n <= last) {
                worker.answer(job);
            }
            if (n > last || direct && n == last) {
                closeQuietly(worker);
            }
        });
        for (int i = 0; i < 3; i++) {
            closeLater(FakeWorker.register(coordinator.address(), "steady-" + i, 3)).serve(FakeWorker.ECHO);
        }
        for (String id : List.of("doomed", "steady-0", "steady-1", "steady-2")) {
            coordinator.awaitWorker(id);
        }
        InMemoryResultStore store = new InMemoryResultStore();
        List<Job> jobs = TestJobs.jobs("job", 300);
        Map<String, Integer> dispatchesByThread = new ConcurrentHashMap<>();

        RunReport report = new Scheduler(coordinator.pool, store, SchedulerOptions.defaults()
                .withWaitForWorkers(Duration.ofSeconds(10))
                .withListener(new ProgressListener() {
                    @Override
                    public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                        dispatchesByThread.merge(Thread.currentThread().getName(), 1, Integer::sum);
                    }
                })).run(jobs);

        assertThat(report.allCompleted()).as("%s", report).isTrue();
        assertThat(report.completed()).isEqualTo(300);
        if (!direct) {
            // It closes with the 3rd and 4th jobs of the first round unanswered.
            assertThat(report.redeliveries()).as("jobs held by the dead worker were sent again").isPositive();
        }
        assertThat(report.completedByWorker().getOrDefault("doomed", 0)).isBetween(1, 20);
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(records::add);
        Set<String> jobIds = new HashSet<>();
        records.forEach(r -> jobIds.add(r.jobId().value()));
        assertThat(records).hasSize(300);
        assertThat(jobIds).hasSize(300);
        // The pool lets the doomed worker go on its selector's thread, not necessarily before the run returns.
        TestCoordinator.eventually().untilAsserted(() -> assertThat(coordinator.pool.snapshot())
                .extracting(w -> w.id()).containsExactlyInAnyOrder("steady-0", "steady-1", "steady-2"));
        return dispatchesByThread;
    }

    private static void closeQuietly(FakeWorker worker) {
        try {
            worker.close();
        } catch (IOException e) {
            throw new IllegalStateException("closing the fake worker failed", e);
        }
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        toClose.add(closeable);
        return closeable;
    }
}
