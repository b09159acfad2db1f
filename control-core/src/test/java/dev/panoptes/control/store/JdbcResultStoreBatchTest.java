package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ResultStore.Answer;
import dev.panoptes.control.store.ResultStore.Receipt;
import dev.panoptes.control.store.ResultStore.Written;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link JdbcResultStore#recordAll} on SQLite: a batch is one transaction, all or nothing; a
 * record the database refuses fails its own answer only; a record given twice in one batch is
 * stored once; a batch whose commit outcome was unknown is not its own duplicate when repeated.
 */
class JdbcResultStoreBatchTest {
    @TempDir
    Path dir;

    private final AtomicInteger commits = new AtomicInteger();
    /** The next commit fails without committing. */
    private final AtomicBoolean failNextCommit = new AtomicBoolean();
    /** The next commit commits, then fails as if its reply were lost. */
    private final AtomicBoolean loseNextCommitReply = new AtomicBoolean();

    private JdbcResultStore open() {
        String url = "jdbc:sqlite:" + dir.resolve("b.db");
        return JdbcResultStore.open(() -> {
            Connection real = DriverManager.getConnection(url);
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        boolean commit = method.getName().equals("commit");
                        if (commit && failNextCommit.compareAndSet(true, false)) {
                            throw new SQLException("disk I/O error while committing");
                        }
                        try {
                            Object result = method.invoke(real, args);
                            if (commit) {
                                commits.incrementAndGet();
                                if (loseNextCommitReply.compareAndSet(true, false)) {
                                    throw new SQLException("connection reset while reading the reply to COMMIT");
                                }
                            }
                            return result;
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }, url, null, "test", 1_000, Clock.systemUTC());
    }

    private static List<Answer> answers(Job... jobs) {
        List<Answer> answers = new ArrayList<>();
        for (Job job : jobs) {
            answers.add(new Answer(job, TestJobs.echo(job), "w1"));
        }
        return answers;
    }

    @Test
    void aBatchIsStoredInOneTransaction() {
        List<Job> jobs = TestJobs.jobs("j", 20);
        try (JdbcResultStore store = open()) {
            int before = commits.get();
            List<Written> done = new ArrayList<>();
            store.recordAll(answers(jobs.toArray(Job[]::new)), done);

            assertThat(commits.get() - before).isEqualTo(1);
            assertThat(done).hasSize(20).allSatisfy(w -> {
                assertThat(w.refused()).isNull();
                assertThat(w.receipt().stored()).isPositive();
                assertThat(w.receipt().duplicates()).isZero();
            });
            assertThat(store.completedAmong(jobs)).hasSize(20);
        }
    }

    @Test
    void aBatchWhoseCommitFailsStoresNothingAndIsStoredWholeWhenRepeated() {
        Job a = TestJobs.job("a", "x", "y");
        Job b = TestJobs.job("b", "x");
        try (JdbcResultStore store = open()) {
            failNextCommit.set(true);
            List<Written> done = new ArrayList<>();
            assertThatThrownBy(() -> store.recordAll(answers(a, b), done)).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("cannot store the outcome of job a from worker w1 and of 1 more");
            assertThat(done).as("nothing acknowledged").isEmpty();
            assertThat(store.recordCount()).as("nothing stored").isZero();

            store.recordAll(answers(a, b), done);
            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(2, 0), new Receipt(1, 0));
            assertThat(store.recordCount()).isEqualTo(3);
        }
    }

    @Test
    void aBatchWhoseCommitOutcomeWasUnknownFindsItsOwnRowsWhenRepeated() {
        Job a = TestJobs.job("a", "x", "y");
        Job b = TestJobs.job("b", "x");
        try (JdbcResultStore store = open()) {
            loseNextCommitReply.set(true);
            assertThatThrownBy(() -> store.recordAll(answers(a, b), new ArrayList<>()))
                    .isInstanceOf(StoreException.class);

            List<Written> done = new ArrayList<>();
            store.recordAll(answers(a, b), done);
            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(2, 0), new Receipt(1, 0));
            assertThat(store.duplicateCount()).isZero();
            assertThat(store.recordCount()).isEqualTo(3);
        }
    }

    @Test
    void oneRefusedAnswerFailsAloneAndItsNeighboursAreStored() {
        Job before = TestJobs.job("before", "a");
        // Metadata that is not JSON: the data's own fault, which no retry mends.
        Job bad = new Job(JobId.of("bad"), new EvalSpec("test", List.of(new Vignette("v0", "a", null,
                Map.of("odd", new Object())))));
        Job after = TestJobs.job("after", "a", "b");
        try (JdbcResultStore store = open()) {
            List<Answer> batch = List.of(new Answer(before, TestJobs.echo(before), "w1"),
                    new Answer(bad, TestJobs.echo(bad), "w1"),
                    new Answer(after, TestJobs.echo(after), "w1"));
            List<Written> done = new ArrayList<>();
            store.recordAll(batch, done);

            assertThat(done).hasSize(3);
            assertThat(done.get(0).receipt()).isEqualTo(new Receipt(1, 0));
            assertThat(done.get(1).receipt()).isNull();
            assertThat(done.get(1).refused()).hasMessageContaining("cannot store the outcome of job bad from worker w1")
                    .hasMessageContaining("vignette 'v0' has metadata that is not JSON");
            assertThat(done.get(2).receipt()).isEqualTo(new Receipt(2, 0));
            assertThat(store.storedVignetteIds(JobId.of("bad"))).isEmpty();
            assertThat(store.recordCount()).isEqualTo(3);
        }
    }

    @Test
    void anAnswerTwiceInOneBatchIsStoredOnceAndItsCopyCountedDuplicate() {
        Job a = TestJobs.job("a", "x", "y");
        Job b = TestJobs.job("b", "x");
        try (JdbcResultStore store = open()) {
            List<Written> done = new ArrayList<>();
            store.recordAll(answers(a, b, a), done);

            assertThat(done).extracting(Written::receipt)
                    .containsExactly(new Receipt(2, 0), new Receipt(1, 0), new Receipt(0, 2));
            assertThat(store.duplicateCount()).isEqualTo(2);
            assertThat(store.recordCount()).isEqualTo(3);
        }
    }

    @Test
    void anAnswerInDoubtTwiceInOneBatchCountsItsOwnRowsOnceAndItsCopyDuplicate() {
        Job a = TestJobs.job("a", "x");
        try (JdbcResultStore store = open()) {
            loseNextCommitReply.set(true);
            assertThatThrownBy(() -> store.record(a, TestJobs.echo(a), "w1")).isInstanceOf(StoreException.class);

            List<Written> done = new ArrayList<>();
            store.recordAll(answers(a, a), done);
            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(1, 0), new Receipt(0, 1));
            assertThat(store.recordCount()).isEqualTo(1);
        }
    }

    @Test
    void aScoredBatchScoresEveryAnswerIntoItsRunsScoring() {
        List<Job> jobs = TestJobs.jobs("s", 5);
        try (JdbcResultStore store = open()) {
            store.withScoring((v, r) -> new ScoreEntry("exact", 1.0, null));
            store.recordAll(answers(jobs.toArray(Job[]::new)), new ArrayList<>());

            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).hasSize(5).allSatisfy(r -> assertThat(r.score()).isNotNull());
        }
    }

    @Test
    void eachRecordKeepsItsOwnVignettesContextAndScoreWhateverTheOrderOfTheAnswers() {
        Job job = new Job(JobId.of("o"), new EvalSpec("suite", List.of(new Vignette("v1", "one?", "1", Map.of()),
                new Vignette("v2", "two?", "2", Map.of()), new Vignette("v3", "three?", "3", Map.of()))), "run-o", 0);
        // Out of the job's order, one vignette answered twice, one answer to a vignette the job has not.
        JobOutcome outcome = new JobOutcome(job.id(), List.of(new ResponseRecord("v3", "3"),
                new ResponseRecord("v1", "wrong"), new ResponseRecord("zz", "9"), new ResponseRecord("v1", "1"),
                new ResponseRecord("v2", "2")));
        try (JdbcResultStore store = open()) {
            store.withScoring((v, r) -> new ScoreEntry("exact", r.response().equals(v.expected()) ? 1.0 : 0.0,
                    "against " + v.expected()));
            List<Written> done = new ArrayList<>();
            store.recordAll(List.of(new Answer(job, outcome, "w1")), done);

            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(4, 1));
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).extracting(r -> r.record().vignetteId() + " " + r.record().response() + " "
                    + r.context().prompt() + " " + r.context().expected() + " "
                    + (r.score() == null ? "unscored" : r.score().score() + " " + r.score().explanation()))
                    .containsExactlyInAnyOrder("v1 wrong one? 1 0.0 against 1", "v2 2 two? 2 1.0 against 2",
                            "v3 3 three? 3 1.0 against 3", "zz 9 null null unscored");
        }
    }

    @Test
    void aBatchWithOneAnswerThatKeepsMoreStoresEveryColumnOfEachAnswer() {
        // One answer with metadata, an error and a transcript among answers with none: the batch
        // goes in by the full insert, and the others' columns stay null.
        Job plain = TestJobs.job("plain", "a");
        Job rich = new Job(JobId.of("rich"), new EvalSpec("test", List.of(new Vignette("v0", "a", "x",
                Map.of("topic", "sums")))));
        JobOutcome richOutcome = new JobOutcome(rich.id(), List.of(new ResponseRecord("v0", "", "m", "error", 5L,
                null, "timed out", "{\"turns\":[]}")));
        try (JdbcResultStore store = open()) {
            List<Written> done = new ArrayList<>();
            store.recordAll(List.of(new Answer(plain, TestJobs.echo(plain), "w1"),
                    new Answer(rich, richOutcome, "w1")), done);
            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(1, 0), new Receipt(1, 0));

            Map<String, StoredRecord> byJob = new java.util.HashMap<>();
            store.forEachRecord(r -> byJob.put(r.jobId().value(), r));
            assertThat(byJob.get("rich").context().metadataJson()).contains("sums");
            assertThat(byJob.get("rich").record().error()).isEqualTo("timed out");
            assertThat(byJob.get("rich").record().transcript()).isEqualTo("{\"turns\":[]}");
            assertThat(byJob.get("plain").context().metadataJson()).isNull();
            assertThat(byJob.get("plain").record().error()).isNull();
            assertThat(byJob.get("plain").record().transcript()).isNull();
        }
    }

    @Test
    void aBatchClearsTheFailuresOfItsJobsAndLeavesOthers() {
        Job failed = TestJobs.job("failed", "a");
        Job other = TestJobs.job("other", "a");
        Job stillFailed = TestJobs.job("still", "a");
        try (JdbcResultStore store = open()) {
            store.recordFailure(failed, "worker lost", 3);
            store.recordFailure(stillFailed, "worker lost", 3);
            store.recordAll(answers(other, failed), new ArrayList<>());

            List<String> failures = new ArrayList<>();
            store.forEachFailure(f -> failures.add(f.jobId().value()));
            assertThat(failures).containsExactly("still");
        }
    }

    @Test
    void aBatchAfterTheLastFailureWasClearedStoresWithoutClearing() {
        Job failed = TestJobs.job("failed", "a");
        Job later = TestJobs.job("later", "a");
        try (JdbcResultStore store = open()) {
            store.recordFailure(failed, "worker lost", 3);
            store.recordAll(answers(failed), new ArrayList<>());
            List<Written> done = new ArrayList<>();
            store.recordAll(answers(later), done);
            assertThat(done).extracting(Written::receipt).containsExactly(new Receipt(1, 0));

            store.recordFailure(later, "judge failed", 1);
            store.recordAll(answers(later), new ArrayList<>());
            List<String> failures = new ArrayList<>();
            store.forEachFailure(f -> failures.add(f.jobId().value()));
            assertThat(failures).as("a failure recorded after the table was empty is cleared too").isEmpty();
        }
    }

    @Test
    void anAnswerServedFromTheCacheKeepsTheRunItCopies() {
        // The lean insert leaves cached_from out: an answer that has one must not go in by it.
        Job cached = TestJobs.job("cached", "a");
        try (JdbcResultStore store = open()) {
            store.store(cached, TestJobs.echo(cached), "w1", Map.of("v0", "run-a"));
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).singleElement().satisfies(r -> assertThat(r.cachedFrom()).isEqualTo("run-a"));
        }
    }
}
