package dev.panoptes.control.schedule;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.StoreException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@link StoreWriter} hands the answers queued behind each other to the store in one call (a
 * JDBC store commits them in one transaction), tells the run an answer is stored only once that
 * call reports it done, writes a batch that failed again whole, and refuses an answer the store
 * refuses without failing its neighbours. Inline, so that the test steps it.
 */
class StoreWriterBatchTest {
    @TempDir
    Path dir;

    private final List<Runnable> posted = new ArrayList<>();
    private final List<String> heard = new ArrayList<>();
    private final SchedulerOptions.StoreRetry retry = new SchedulerOptions.StoreRetry(Duration.ofMillis(1),
            Duration.ofMillis(2), Duration.ofSeconds(30), 1_000);

    /** A worker that only has a name: the writes' worker, never dispatched to. Shared with {@link StoreWriterLingerTest}. */
    static final WorkerHandle WORKER = new WorkerHandle() {
        @Override
        public String id() {
            return "w1";
        }

        @Override
        public int capacity() {
            return 1;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            throw new UnsupportedOperationException();
        }
    };

    /** Counts the store's batch calls and fails the first {@code failures} of them before writing anything. */
    private static final class CountingStore extends ForwardingResultStore {
        final List<Integer> batchSizes = new ArrayList<>();
        int failures;

        CountingStore(ResultStore delegate, int failures) {
            super(delegate);
            this.failures = failures;
        }

        @Override
        public void recordAll(List<Answer> answers, List<Written> done) {
            batchSizes.add(answers.size());
            if (failures > 0) {
                failures--;
                throw new StoreException("disk I/O error", null);
            }
            forwardRecordAll(answers, done);
        }
    }

    private StoreWriter writer(ResultStore store, JdbcResultStore db) {
        return new StoreWriter(store, retry, posted::add, new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
                Job job = write.state().job;
                // Acknowledged only once committed: the database holds every record of it already.
                assertThat(db.isComplete(job)).as("job %s stored when acknowledged", job.id()).isTrue();
                heard.add("stored " + job.id() + " " + receipt.stored() + "/" + receipt.duplicates());
            }

            @Override
            public void failureStored(StoreWriter.FailureWrite write) {
                heard.add("failure " + write.state().job.id());
            }

            @Override
            public void refused(StoreWriter.Write write, RecordRejectedException error) {
                heard.add("refused " + write.state().job.id());
            }

            @Override
            public void down(String error, int held) {
                heard.add("down " + held);
            }

            @Override
            public void back(Duration outage, int held) {
                heard.add("back " + held);
            }

            @Override
            public void lost(Throwable error, Duration outage, int held, boolean permanent) {
                heard.add("lost");
            }
        }, true);
    }

    /** Submits each job's echoed answer, in order, as from {@link #WORKER}. Shared with {@link StoreWriterLingerTest}. */
    static void submitAnswers(StoreWriter writer, List<Job> jobs) {
        for (Job job : jobs) {
            writer.submit(new StoreWriter.RecordWrite(new JobState(job), WORKER, TestJobs.echo(job)));
        }
    }

    private void runPosted() {
        List<Runnable> events = new ArrayList<>(posted);
        posted.clear();
        events.forEach(Runnable::run);
    }

    @Test
    void answersQueuedTogetherGoToTheStoreInOneCallAndAreAcknowledgedAfterItsCommit() {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("w.db"))) {
            CountingStore store = new CountingStore(db, 0);
            StoreWriter writer = writer(store, db);
            List<Job> jobs = TestJobs.jobs("j", 10);
            submitAnswers(writer, jobs);
            writer.submit(new StoreWriter.FailureWrite(new JobState(TestJobs.job("f", "x")), "gave up", 3));
            Job late = TestJobs.job("late", "x");
            writer.submit(new StoreWriter.RecordWrite(new JobState(late), WORKER, TestJobs.echo(late)));

            assertThat(writer.writeQueuedHere()).isTrue();
            runPosted();

            assertThat(store.batchSizes).containsExactly(10, 1);
            assertThat(heard).hasSize(12).startsWith("stored j-0 1/0").contains("failure f")
                    .endsWith("stored late 1/0");
            assertThat(writer.held()).isZero();
        }
    }

    @Test
    void aBatchThatFailsIsWrittenAgainWholeAndAcknowledgedOnlyThen() {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("w.db"))) {
            CountingStore store = new CountingStore(db, 2);
            StoreWriter writer = writer(store, db);
            List<Job> jobs = TestJobs.jobs("j", 5);
            submitAnswers(writer, jobs);
            // A copy of an answer in the same batch: stored once, the copy a duplicate.
            writer.submit(new StoreWriter.RecordWrite(new JobState(jobs.get(0)), WORKER, TestJobs.echo(jobs.get(0))));

            writer.writeQueuedHere();
            runPosted();

            assertThat(store.batchSizes).containsExactly(6, 6, 6);
            assertThat(heard).first().isEqualTo("down 6");
            assertThat(heard).filteredOn(e -> e.startsWith("stored")).hasSize(6);
            assertThat(heard.indexOf("back 0")).isPositive().isLessThan(heard.indexOf("stored j-0 1/0"));
            assertThat(heard).last().isEqualTo("stored j-0 0/1");
            assertThat(db.recordCount()).isEqualTo(5);
        }
    }

    @Test
    void anAnswerTheStoreRefusesIsRefusedAloneAndItsNeighboursAreStored() {
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("w.db"))) {
            StoreWriter writer = writer(db, db);
            Job before = TestJobs.job("before", "x");
            // Metadata that is not JSON: the data's own fault, which no retry mends.
            Job bad = new Job(JobId.of("bad"), new EvalSpec("test", List.of(new Vignette("v0", "x", null,
                    Map.of("odd", new Object())))));
            Job after = TestJobs.job("after", "x");
            writer.submit(new StoreWriter.RecordWrite(new JobState(before), WORKER, TestJobs.echo(before)));
            writer.submit(new StoreWriter.RecordWrite(new JobState(bad), WORKER, TestJobs.echo(bad)));
            writer.submit(new StoreWriter.RecordWrite(new JobState(after), WORKER, TestJobs.echo(after)));

            writer.writeQueuedHere();
            runPosted();

            assertThat(heard).containsExactly("stored before 1/0", "refused bad", "stored after 1/0");
            assertThat(db.recordCount()).isEqualTo(2);
        }
    }

    @Test
    void anAnswerItsScorerFailsOnIsStoredUnscoredAndItsNeighboursScored() {
        AtomicInteger scored = new AtomicInteger();
        try (JdbcResultStore db = JdbcResultStore.openSqlite(dir.resolve("w.db"))) {
            db.withScoring((v, r) -> {
                if (r.response().contains("boom")) {
                    throw new IllegalStateException("cannot score " + r.response());
                }
                if (r.response().contains("deep")) {
                    throw new StackOverflowError();
                }
                scored.incrementAndGet();
                return new ScoreEntry("exact", 1.0, null);
            });
            StoreWriter writer = writer(db, db);
            Job before = TestJobs.job("before", "x");
            Job bad = TestJobs.job("bad", "boom");
            Job deep = TestJobs.job("deep", "deep");
            Job after = TestJobs.job("after", "x");
            for (Job job : List.of(before, bad, deep, after)) {
                writer.submit(new StoreWriter.RecordWrite(new JobState(job), WORKER, TestJobs.echo(job)));
            }

            writer.writeQueuedHere();
            runPosted();

            assertThat(heard).containsExactly("stored before 1/0", "stored bad 1/0", "stored deep 1/0",
                    "stored after 1/0");
            Map<String, ScoreEntry> scores = new HashMap<>();
            db.forEachRecord(r -> scores.put(r.jobId().value(), r.score()));
            assertThat(scores).hasSize(4);
            assertThat(scores.get("bad").score()).isNull();
            assertThat(scores.get("bad").explanation())
                    .isEqualTo("not scored: the scorer failed: java.lang.IllegalStateException: cannot score re: boom");
            assertThat(scores.get("deep").score()).isNull();
            assertThat(scores.get("deep").explanation()).isEqualTo("not scored: the scorer failed: "
                    + "java.lang.StackOverflowError");
            assertThat(scores.get("before").score()).isEqualTo(1.0);
            assertThat(scores.get("after").score()).isEqualTo(1.0);
            assertThat(scored).hasValue(2);
        }
    }
}
