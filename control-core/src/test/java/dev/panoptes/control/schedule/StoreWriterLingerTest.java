package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.local.LocalPool;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit on the writer's own thread: answers that arrive one by one, close together, share
 * one store call (one commit) instead of one each; a full batch does not wait; and a run that
 * finishes is not held back by the wait. The linger is set to a minute here, so that only the
 * batch filling up or the run finishing can end it, whatever the machine's load.
 */
class StoreWriterLingerTest {
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

    @TempDir
    Path dir;

    private final AtomicInteger stored = new AtomicInteger();
    private final SchedulerOptions.StoreRetry retry = new SchedulerOptions.StoreRetry(Duration.ofMillis(1),
            Duration.ofMillis(2), Duration.ofSeconds(30), 10_000);

    private static final class CountingStore extends ForwardingResultStore {
        final List<Integer> batchSizes = new CopyOnWriteArrayList<>();

        CountingStore(ResultStore delegate) {
            super(delegate);
        }

        @Override
        public void recordAll(List<Answer> answers, List<Written> done) {
            batchSizes.add(answers.size());
            forwardRecordAll(answers, done);
        }
    }

    /** A threaded writer whose events run where they are posted: only {@code stored} is counted. */
    private StoreWriter writer(ResultStore store, long lingerNanos) {
        return new StoreWriter(store, retry, Runnable::run, new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
                stored.incrementAndGet();
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
        }, false, lingerNanos);
    }

    /** Polls {@code condition} until it holds or {@code deadline} ({@link System#nanoTime}) passes; the caller asserts. */
    private static void waitUntil(BooleanSupplier condition, long deadline) throws InterruptedException {
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(1); // polling a condition, with a deadline
        }
    }

    private static void awaitIdle(StoreWriter writer) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        waitUntil(() -> !writer.working(), deadline);
        assertThat(writer.working()).as("writer done within 20 s").isFalse();
    }

    @Test
    void answersArrivingOneByOneShareOneCommitAndFinishingDoesNotWaitForTheLinger() throws Exception {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("l.db"))) {
            CountingStore store = new CountingStore(db);
            StoreWriter writer = writer(store, MINUTE);

            List<Job> jobs = TestJobs.jobs("j", 7);
            StoreWriterBatchTest.submitAnswers(writer, jobs.subList(0, 1));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            waitUntil(writer::lingering, deadline);
            assertThat(writer.lingering()).as("the writer waits with one answer for others to join it").isTrue();
            for (Job job : jobs.subList(1, 7)) {
                StoreWriterBatchTest.submitAnswers(writer, List.of(job));
                assertThat(store.batchSizes).as("nothing written while the linger runs").isEmpty();
            }
            writer.finish();
            awaitIdle(writer);

            assertThat(store.batchSizes).containsExactly(7);
            assertThat(stored.get()).isEqualTo(7);
            assertThat(db.recordCount()).isEqualTo(7);
        }
    }

    @Test
    void aFullBatchGoesAtOnceWithoutWaitingForTheLinger() throws Exception {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("f.db"))) {
            CountingStore store = new CountingStore(db);
            StoreWriter writer = writer(store, MINUTE);

            StoreWriterBatchTest.submitAnswers(writer, TestJobs.jobs("j", StoreWriter.BATCH));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            waitUntil(() -> stored.get() >= StoreWriter.BATCH, deadline);

            assertThat(stored.get()).as("a whole batch stored while the linger had a minute to run")
                    .isEqualTo(StoreWriter.BATCH);
            assertThat(store.batchSizes).containsExactly(StoreWriter.BATCH);
            StoreWriterBatchTest.submitAnswers(writer, TestJobs.jobs("k", 3));
            writer.finish();
            awaitIdle(writer);
            assertThat(store.batchSizes).containsExactly(StoreWriter.BATCH, 3);
            assertThat(db.recordCount()).isEqualTo(StoreWriter.BATCH + 3);
        }
    }

    @Test
    void theDefaultHoldLeavesRoomForACommitInProgress() {
        // While a full batch commits, the answers landing meanwhile wait; were the default maxHeld
        // under two batches, a fleet's deep queue would pause dispatch at every commit.
        assertThat(SchedulerOptions.StoreRetry.defaults().maxHeld()).isGreaterThanOrEqualTo(2 * StoreWriter.BATCH);
    }

    @Test
    void aDeepQueueGoesToTheStoreTwoThousandAndFortyEightAtATime() throws Exception {
        // A fleet answering out of job order dirties a key-index page per answer: the more answers a
        // commit holds, the more share a page (see StoreWriter.BATCH). 2,100 queued at once are 2,048 and 52.
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("d.db"))) {
            CountingStore store = new CountingStore(db);
            StoreWriter writer = writer(store, MINUTE);

            StoreWriterBatchTest.submitAnswers(writer, TestJobs.jobs("j", 2100));
            writer.finish();
            awaitIdle(writer);

            assertThat(store.batchSizes).containsExactly(2048, 52);
            assertThat(stored.get()).isEqualTo(2100);
            assertThat(db.recordCount()).isEqualTo(2100);
        }
    }

    @Test
    void theRunsLastWritesGoAtOnceAndTheWriterStaysUp() throws Exception {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("last.db"))) {
            CountingStore store = new CountingStore(db);
            StoreWriter writer = writer(store, MINUTE);

            StoreWriterBatchTest.submitAnswers(writer, TestJobs.jobs("j", 2));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            waitUntil(writer::lingering, deadline);
            assertThat(writer.lingering()).as("the writer waits for others to join its two answers").isTrue();
            writer.lastWritesQueued();
            waitUntil(() -> stored.get() >= 2, deadline);
            assertThat(stored.get()).as("stored while the linger had a minute to run").isEqualTo(2);
            assertThat(writer.working()).as("not finished: a later write still has a thread").isTrue();

            // A write after the last (a refused answer's failure, say) does not linger either.
            StoreWriterBatchTest.submitAnswers(writer, TestJobs.jobs("k", 1));
            waitUntil(() -> stored.get() >= 3, deadline);
            assertThat(stored.get()).isEqualTo(3);
            assertThat(store.batchSizes).containsExactly(2, 1);
            writer.finish();
            awaitIdle(writer);
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aRunEndsWithoutWaitingTheLingerForItsLastAnswers() throws Exception {
        // With a minute's linger, only the ledger telling the writer that nothing more will come
        // lets this run end before a minute: its last answers would otherwise wait it out.
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("run.db"));
             LocalPool pool = new LocalPool()) {
            CountingStore store = new CountingStore(db);
            pool.start("a", 2, TestJobs.echoRunner());
            SchedulerRun run = new SchedulerRun(pool, store, SchedulerOptions.defaults(), TestJobs.jobs("j", 5),
                    System::nanoTime);
            run.storeLinger(MINUTE);
            long started = System.nanoTime();
            RunReport report = run.finish(run.execute());

            assertThat(report.completed()).isEqualTo(5);
            assertThat(db.recordCount()).isEqualTo(5);
            assertThat(System.nanoTime() - started).as("the run did not wait out a minute's linger")
                    .isLessThan(TimeUnit.SECONDS.toNanos(25));
        }
    }
}
