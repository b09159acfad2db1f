package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An answer that reaches the coordinator after its attempt timed out is not stored, but its model
 * calls were paid for: the scheduler's listener is told what it spent
 * ({@link ProgressListener#onAttemptSpent}), which is what the budget and the summary's "not
 * stored" line count. So is one that comes in time but does not answer its job.
 */
class LateAnswerSpendTest {
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    @Test
    void whatALateAnswerSpentReachesTheSchedulersListener() throws Exception {
        TestCoordinator coordinator = closeLater(TestCoordinator.start());
        FakeWorker worker = closeLater(FakeWorker.register(coordinator.address(), "late", 1));
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<Job> held = new CopyOnWriteArrayList<>();
        worker.serveMessages((w, m) -> {
            if (m instanceof Message.Assign assign) {
                if (seen.add(assign.job().id().value())) {
                    held.add(assign.job());         // the first attempt: no answer until it is cancelled
                } else {
                    w.answer(assign.job());         // the second: at once
                }
            } else if (m instanceof Message.Cancel cancel && !held.isEmpty()
                    && held.get(0).id().equals(cancel.jobId())) {
                // Its calls answered just as the coordinator gave up on it: 100 + 10 tokens each.
                w.answer(withUsage(held.get(0), new Usage(100, 10)));
            }
        });
        coordinator.awaitWorker("late");
        Job job = TestJobs.job("slow", "one", "two");
        List<Usage> spent = new CopyOnWriteArrayList<>();
        ProgressListener listener = new ProgressListener() {
            @Override
            public void onAttemptSpent(Job j, WorkerHandle w, Usage usage) {
                assertThat(j.id()).isEqualTo(job.id());
                spent.add(usage);
            }
        };

        RunReport report = new Scheduler(coordinator.pool, new InMemoryResultStore(), SchedulerOptions.defaults()
                .withJobTimeout(Duration.ofMillis(300))
                .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .withWaitForWorkers(Duration.ofSeconds(10))
                .withListener(listener)).run(List.of(job));

        assertThat(report.allCompleted()).as("%s", report).isTrue();
        assertThat(held).as("the first attempt was held").hasSize(1);
        // The late answer freed the only slot before the second attempt could be sent, so its
        // spend was queued before the answer that ended the run.
        assertThat(spent).containsExactly(new Usage(200, 20));
    }

    @Test
    void whatAResultThatDoesNotAnswerItsJobSpentReachesTheSchedulersListener() throws Exception {
        TestCoordinator coordinator = closeLater(TestCoordinator.start());
        FakeWorker worker = closeLater(FakeWorker.register(coordinator.address(), "wrong", 1));
        Set<String> seen = ConcurrentHashMap.newKeySet();
        worker.serve((w, job) -> {
            if (seen.add(job.id().value())) {
                // The first attempt answers one vignette twice: not an answer to the job, but paid for.
                JobOutcome right = withUsage(job, new Usage(100, 10));
                List<ResponseRecord> records = new ArrayList<>(right.records());
                records.add(records.get(0));
                w.answer(new JobOutcome(job.id(), records));
            } else {
                w.answer(job);
            }
        });
        coordinator.awaitWorker("wrong");
        Job job = TestJobs.job("twice", "one", "two");
        List<Usage> spent = new CopyOnWriteArrayList<>();

        RunReport report = new Scheduler(coordinator.pool, new InMemoryResultStore(), SchedulerOptions.defaults()
                .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .withWaitForWorkers(Duration.ofSeconds(10))
                .withListener(new ProgressListener() {
                    @Override
                    public void onAttemptSpent(Job j, WorkerHandle w, Usage usage) {
                        spent.add(usage);
                    }
                })).run(List.of(job));

        assertThat(report.allCompleted()).as("%s", report).isTrue();
        assertThat(spent).containsExactly(new Usage(300, 30));
    }

    private static JobOutcome withUsage(Job job, Usage each) {
        List<ResponseRecord> records = new ArrayList<>();
        for (Vignette v : job.spec().vignettes()) {
            records.add(new ResponseRecord(v.id(), "late: " + v.prompt(), "m", "stop", 5L, each));
        }
        return new JobOutcome(job.id(), records);
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        toClose.add(closeable);
        return closeable;
    }
}
