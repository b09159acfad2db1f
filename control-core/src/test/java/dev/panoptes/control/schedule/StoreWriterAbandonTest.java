package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link StoreWriter#abandon()} on the writer's own thread, against a store that takes a while per
 * call: once it returns the store is written no more, and the count it reports as not stored
 * ({@link StoreWriter#held()}, which it logs) is exactly what the store did not take, so the run's
 * last word is true and its caller may close the store.
 */
class StoreWriterAbandonTest {
    /** Each write is its own store call: answers and failures alternate. */
    private static final int WRITES = 120;
    /** How long the store takes per call: the writer's 2-second flush gets through a part of the batch. */
    private static final long CALL_MILLIS = 40;

    private final SchedulerOptions.StoreRetry retry = new SchedulerOptions.StoreRetry(Duration.ofMillis(1),
            Duration.ofMillis(2), Duration.ofSeconds(30), 10_000);

    /** A store that takes {@value #CALL_MILLIS} ms per call and counts what it wrote after being told the writer was abandoned. */
    private static final class SlowStore extends ForwardingResultStore {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger writesAfterAbandon = new AtomicInteger();
        volatile boolean abandoned;

        SlowStore(ResultStore delegate) {
            super(delegate);
        }

        private void takeAWhile() {
            calls.incrementAndGet();
            try {
                // The store's own latency, not a synchronisation: the test waits on conditions.
                TimeUnit.MILLISECONDS.sleep(CALL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void recordAll(List<Answer> answers, List<Written> done) {
            takeAWhile();
            forwardRecordAll(answers, done);
            if (abandoned) {
                writesAfterAbandon.incrementAndGet();
            }
        }

        @Override
        public void recordFailure(Job job, String reason, int attempts) {
            takeAWhile();
            super.recordFailure(job, reason, attempts);
            if (abandoned) {
                writesAfterAbandon.incrementAndGet();
            }
        }
    }

    private static StoreWriter.Outcomes ignoring() {
        return new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
            }

            @Override
            public void failureStored(StoreWriter.FailureWrite write) {
            }

            @Override
            public void refused(StoreWriter.Write write, RecordRejectedException error) {
            }

            @Override
            public void down(String error, int held) {
            }

            @Override
            public void back(Duration outage, int held) {
            }

            @Override
            public void lost(Throwable error, Duration outage, int held, boolean permanent) {
            }
        };
    }

    @Test
    void afterAbandonReturnsNothingMoreIsWrittenAndWhatItReportsNotStoredIsWhatTheStoreLacks() {
        InMemoryResultStore memory = new InMemoryResultStore();
        SlowStore store = new SlowStore(memory);
        StoreWriter writer = new StoreWriter(store, retry, event -> { }, ignoring());
        List<Job> jobs = TestJobs.jobs("j", WRITES);
        for (int i = 0; i < WRITES; i++) {
            Job job = jobs.get(i);
            JobState state = new JobState(job);
            writer.submit(i % 2 == 0 ? new StoreWriter.RecordWrite(state, StoreWriterBatchTest.WORKER,
                    TestJobs.echo(job)) : new StoreWriter.FailureWrite(state, "gave up", 3));
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> store.calls.get() >= 2);

        writer.abandon();
        store.abandoned = true;
        int reportedNotStored = writer.held();

        // Time for a writer that went on to show it: a few of the store's calls.
        await().during(10 * CALL_MILLIS, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> store.writesAfterAbandon.get() == 0);
        int inStore = (int) memory.recordCount() + failures(memory);
        assertThat(reportedNotStored).as("reported not stored; the store holds %d of %d", inStore, WRITES)
                .isPositive().isEqualTo(WRITES - inStore);
        await().atMost(5, TimeUnit.SECONDS).until(() -> !writer.working());
    }

    private static int failures(ResultStore store) {
        AtomicInteger count = new AtomicInteger();
        store.forEachFailure(f -> count.incrementAndGet());
        return count.get();
    }
}
