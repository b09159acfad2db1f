package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.local.LocalPool;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.JobFailure;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.StoreException;
import dev.panoptes.control.store.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A run whose result store fails: it waits for the store, holding the answers it has and sending
 * no new job, stores every answer once when the store is back, stops cleanly when it never comes
 * back, and fails only the job whose answer the store refuses. With stores that fail on purpose,
 * a SQLite file locked by another connection and a PostgreSQL server whose backend is terminated.
 */
class SchedulerStoreOutageTest {
    @TempDir
    Path dir;

    private final LocalPool pool = new LocalPool();
    private final InMemoryResultStore memory = new InMemoryResultStore();
    private final Events events = new Events();
    private final SchedulerOptions fast = SchedulerOptions.defaults()
            .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
            .withWaitForWorkers(Duration.ofSeconds(10))
            .withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(2), Duration.ofMillis(20),
                    Duration.ofSeconds(30), 1_000))
            .withListener(events);

    @AfterEach
    void tearDown() {
        pool.close();
    }

    @Test
    void aStoreThatFailsForAWhileCostsNoAnswerAndEveryJobIsStoredOnceInOrder() throws Exception {
        pool.start("a", 3, TestJobs.echoRunner());
        pool.start("b", 2, TestJobs.echoRunner());
        FlakyStore store = new FlakyStore(memory);
        store.failNextRecords(7);
        List<Job> jobs = TestJobs.jobs("j", 60);

        RunReport report = new Scheduler(pool, store, fast).run(jobs);

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completed()).isEqualTo(60);
        assertThat(report.duplicates()).isZero();
        assertEveryJobStoredOnce(memory, jobs);
        assertThat(events.downs).singleElement().asString().contains("Connection to db:5432 refused").contains("held");
        assertThat(events.backs).hasSize(1);
        // The answer that met the outage is the first stored after it: the held ones go in order.
        assertThat(store.storedInOrder()).isEqualTo(store.firstTriedInOrder());
    }

    @Test
    void whileTheStoreIsDownNoNewJobIsSentAndTheAnswersOfJobsInFlightAreHeld() throws Exception {
        pool.start("a", 4, TestJobs.echoRunner());
        FlakyStore store = new FlakyStore(memory);
        AtomicInteger dispatched = new AtomicInteger();
        AtomicInteger dispatchedWhenDown = new AtomicInteger(-1);
        CountDownLatch down = new CountDownLatch(1);
        store.failFromRecord(10);
        SchedulerOptions options = fast.withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(2),
                Duration.ofMillis(20), Duration.ofSeconds(30), 4)).withListener(ProgressListener.fanOut(List.of(events,
                new ProgressListener() {
            @Override
            public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                dispatched.incrementAndGet();
            }

            @Override
            public void onStoreDown(String error, int held) {
                dispatchedWhenDown.set(dispatched.get());
                down.countDown();
            }
        })));
        List<Job> jobs = TestJobs.jobs("j", 40);
        RunInBackground run = new RunInBackground(() -> new Scheduler(pool, store, options).run(jobs));

        assertThat(down.await(10, TimeUnit.SECONDS)).isTrue();
        await().during(300, TimeUnit.MILLISECONDS).atMost(2, TimeUnit.SECONDS)
                .until(() -> dispatched.get() == dispatchedWhenDown.get());
        assertThat(dispatched.get()).as("jobs sent: the 10 stored, at most 4 held beyond and 4 in flight")
                .isLessThanOrEqualTo(10 + 4 + 4);
        assertThat(run.isDone()).isFalse();

        store.recover();
        RunReport report = run.get();

        assertThat(report.allCompleted()).isTrue();
        assertEveryJobStoredOnce(memory, jobs);
        assertThat(report.attempts()).as("no answer was thrown away and asked for again").isEqualTo(40);
        assertThat(events.backs).hasSize(1);
    }

    @Test
    void whenAnswersPileUpForASlowStoreNoNewJobIsSentBeyondTheLimit() throws Exception {
        pool.start("a", 1, TestJobs.echoRunner());
        CountDownLatch slow = new CountDownLatch(1);
        AtomicInteger entered = new AtomicInteger();
        ResultStore store = new FlakyStore(memory) {
            @Override
            public Receipt record(Job job, JobOutcome outcome, String workerId) {
                entered.incrementAndGet();
                try {
                    slow.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.record(job, outcome, workerId);
            }
        };
        AtomicInteger dispatched = new AtomicInteger();
        SchedulerOptions options = fast
                .withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(2), Duration.ofMillis(20),
                        Duration.ofSeconds(30), 2))
                .withListener(new ProgressListener() {
                    @Override
                    public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                        dispatched.incrementAndGet();
                    }
                });
        List<Job> jobs = TestJobs.jobs("j", 20);
        RunInBackground run = new RunInBackground(() -> new Scheduler(pool, store, options).run(jobs));

        await().atMost(10, TimeUnit.SECONDS).until(() -> entered.get() == 1);
        await().during(300, TimeUnit.MILLISECONDS).atMost(2, TimeUnit.SECONDS)
                .until(() -> dispatched.get() <= 2 + 1);
        slow.countDown();
        RunReport report = run.get();

        assertThat(report.allCompleted()).isTrue();
        assertEveryJobStoredOnce(memory, jobs);
    }

    @Test
    void aStoreDownPastItsLimitStopsTheRunSayingWhatIsKeptAndRunningAgainResumes() throws Exception {
        pool.start("a", 2, TestJobs.echoRunner());
        FlakyStore store = new FlakyStore(memory);
        store.failFromRecord(10);
        SchedulerOptions options = fast.withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(5),
                Duration.ofMillis(50), Duration.ofMillis(300), 1_000));
        List<Job> jobs = TestJobs.jobs("j", 30);

        assertThatThrownBy(() -> new Scheduler(pool, store, options).run(jobs))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageStartingWith("the run stopped with 20 jobs not done: the result store took no write for")
                .hasMessageContaining("(the limit is 300 ms); last error: cannot store the outcome of job")
                .hasMessageContaining("Connection to db:5432 refused")
                .hasMessageContaining("the 10 jobs stored in this run are kept")
                .hasMessageContaining("running the same jobs again resumes")
                .hasCauseInstanceOf(StoreException.class);
        assertThat(memory.recordCount()).isEqualTo(10);

        store.recover();
        RunReport again = new Scheduler(pool, store, fast).run(jobs);
        assertThat(again.skipped()).isEqualTo(10);
        assertThat(again.completed()).isEqualTo(20);
        assertEveryJobStoredOnce(memory, jobs);
    }

    @Test
    void aStoreThatFailsInAWayRetryingCannotMendStopsTheRunAtOnce() {
        pool.start("a", 2, TestJobs.echoRunner());
        ResultStore closed = new FlakyStore(memory) {
            @Override
            public Receipt record(Job job, JobOutcome outcome, String workerId) {
                throw new IllegalStateException("result store jdbc:sqlite:r.db is closed");
            }
        };

        long start = System.nanoTime();
        assertThatThrownBy(() -> new Scheduler(pool, closed, fast).run(TestJobs.jobs("j", 5)))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("writing to the result store failed in a way retrying cannot mend")
                .hasMessageContaining("is closed");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not after the 30 s outage limit")
                .isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void anAnswerTheStoreRefusesIsThatJobsOwnFailureAndTheRunGoesOn() throws Exception {
        pool.start("a", 2, TestJobs.echoRunner());
        ResultStore store = new FlakyStore(memory) {
            @Override
            public Receipt record(Job job, JobOutcome outcome, String workerId) {
                if (job.id().value().equals("j-3")) {
                    throw new RecordRejectedException("cannot store the outcome of job j-3 from worker " + workerId
                            + " in postgresql://db/evals: ERROR: invalid byte sequence for encoding \"UTF8\": 0x00",
                            null);
                }
                return super.record(job, outcome, workerId);
            }
        };

        RunReport report = new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 10));

        assertThat(report.completed()).isEqualTo(9);
        assertThat(report.failed()).singleElement().satisfies(f -> {
            assertThat(f.jobId()).isEqualTo(JobId.of("j-3"));
            assertThat(f.reason()).startsWith("the result store refused the answer of worker a: ")
                    .contains("invalid byte sequence");
        });
        List<JobFailure> failures = new ArrayList<>();
        memory.forEachFailure(failures::add);
        assertThat(failures).extracting(JobFailure::jobId).containsExactly(JobId.of("j-3"));
        assertThat(events.downs).as("a refusal is not an outage").isEmpty();
    }

    @Test
    void aSqliteFileLockedByAnotherConnectionHoldsTheRunUntilItIsReleasedAndEveryJobIsStoredOnce()
            throws Exception {
        Path file = dir.resolve("results.db");
        pool.start("a", 3, TestJobs.echoRunner());
        List<Job> jobs = TestJobs.jobs("j", 30);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(file, Duration.ofMillis(50));
             Connection other = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement lock = other.createStatement()) {
            lock.execute("BEGIN EXCLUSIVE");
            RunInBackground run = new RunInBackground(() -> new Scheduler(pool, store, fast).run(jobs));

            await().atMost(10, TimeUnit.SECONDS).until(() -> !events.downs.isEmpty());
            assertThat(events.downs.get(0)).contains("SQLITE_BUSY");
            lock.execute("COMMIT");
            RunReport report = run.get();

            assertThat(report.allCompleted()).isTrue();
            assertThat(report.completed()).isEqualTo(30);
            assertThat(report.duplicates()).isZero();
            assertThat(store.recordCount()).isEqualTo(30);
            assertThat(store.completedAmong(jobs)).hasSize(30);
            assertThat(events.backs).hasSize(events.downs.size());
        }
    }

    @Test
    void aPostgresBackendTerminatedMidRunIsReplacedAndEveryAnswerIsStoredOnce() throws Exception {
        TestPostgres.Database db = TestPostgres.freshDatabase();
        AtomicInteger terminated = new AtomicInteger();
        // Whichever worker runs j-30 terminates the store's backend before answering, so that the
        // answer of j-30, at least, is written after the connection died.
        dev.panoptes.control.JobRunner runner = job -> {
            if (job.id().value().equals("j-30")) {
                try {
                    terminated.set(db.terminateStores());
                } catch (java.sql.SQLException e) {
                    throw new IllegalStateException("cannot terminate the store's backend: " + e.getMessage(), e);
                }
            }
            return TestJobs.echo(job);
        };
        pool.start("a", 4, runner);
        pool.start("b", 4, runner);
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            jobs.add(TestJobs.job("j-" + i, "p" + i + "a", "p" + i + "b"));
        }
        try (JdbcResultStore store = db.open()) {
            SchedulerOptions options = fast;
            RunReport report = new Scheduler(pool, store, options).run(jobs);

            assertThat(terminated.get()).isEqualTo(1);
            assertThat(report.allCompleted()).isTrue();
            assertThat(report.completed()).isEqualTo(120);
            assertThat(report.duplicates()).isZero();
            assertThat(store.recordCount()).isEqualTo(240);
            assertThat(store.completedAmong(jobs)).hasSize(120);
            assertThat(events.downs).isNotEmpty().allSatisfy(d -> assertThat(d).contains("cannot store the outcome"));
            assertThat(events.backs).hasSize(events.downs.size());
        }
    }

    private static void assertEveryJobStoredOnce(ResultStore store, List<Job> jobs) {
        Map<String, Integer> byJob = new HashMap<>();
        store.forEachRecord(r -> byJob.merge(r.jobId().value(), 1, Integer::sum));
        assertThat(byJob).hasSize(jobs.size());
        for (Job job : jobs) {
            assertThat(byJob.get(job.id().value())).as(job.id().value()).isEqualTo(job.size());
        }
        assertThat(store.duplicateCount()).isZero();
    }

    /** What the run said about its store. Any thread reads; the scheduler's thread writes. */
    private static final class Events implements ProgressListener {
        final List<String> downs = new CopyOnWriteArrayList<>();
        final List<Duration> backs = new CopyOnWriteArrayList<>();

        @Override
        public void onStoreDown(String error, int held) {
            downs.add(error + " (" + held + " held)");
        }

        @Override
        public void onStoreBack(Duration outage, int held) {
            backs.add(outage);
        }
    }

    /** A run on a thread of its own, for tests that act while it runs. */
    private static final class RunInBackground {
        private final java.util.concurrent.FutureTask<RunReport> task;

        RunInBackground(java.util.concurrent.Callable<RunReport> run) {
            task = new java.util.concurrent.FutureTask<>(run);
            Thread t = new Thread(task, "test-run");
            t.setDaemon(true);
            t.start();
        }

        boolean isDone() {
            return task.isDone();
        }

        RunReport get() throws Exception {
            return task.get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * An in-memory store whose writes of outcomes fail while the test says so, as a database that
     * refuses connections would; it notes the order in which jobs were tried and stored.
     */
    private static class FlakyStore extends ForwardingResultStore {
        private final AtomicInteger failuresLeft = new AtomicInteger();
        private final AtomicBoolean failing = new AtomicBoolean();
        private final AtomicInteger recorded = new AtomicInteger();
        private volatile int failFrom = Integer.MAX_VALUE;
        private final List<String> tried = new CopyOnWriteArrayList<>();
        private final List<String> stored = new CopyOnWriteArrayList<>();

        FlakyStore(ResultStore inner) {
            super(inner);
        }

        /** The next {@code n} outcome writes fail. */
        void failNextRecords(int n) {
            failuresLeft.set(n);
        }

        /** Every outcome write fails once {@code n} have been stored, until {@link #recover()}. */
        void failFromRecord(int n) {
            failFrom = n;
        }

        void recover() {
            failFrom = Integer.MAX_VALUE;
            failuresLeft.set(0);
            failing.set(false);
        }

        List<String> firstTriedInOrder() {
            return new ArrayList<>(new java.util.LinkedHashSet<>(tried));
        }

        List<String> storedInOrder() {
            return List.copyOf(stored);
        }

        @Override
        public Receipt record(Job job, JobOutcome outcome, String workerId) {
            tried.add(job.id().value());
            if (recorded.get() >= failFrom || failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new StoreException("cannot store the outcome of job " + job.id() + " from worker " + workerId
                        + " in postgresql://db:5432/evals: Connection to db:5432 refused", null);
            }
            Receipt receipt = delegate().record(job, outcome, workerId);
            recorded.incrementAndGet();
            stored.add(job.id().value());
            return receipt;
        }

        @Override
        public Receipt record(JobOutcome outcome, String workerId) {
            throw new UnsupportedOperationException("the scheduler stores with the job");
        }

        @Override
        public void close() {
        }
    }
}
