package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How a {@link JdbcResultStore} comes through failures (on SQLite, with connections the test can
 * break): a broken connection is replaced, a write whose commit outcome is unknown may be repeated
 * without counting itself a duplicate, and data the database refuses is told apart from a
 * database that is down.
 */
class JdbcResultStoreRecoveryTest {
    @TempDir
    Path dir;

    /** Real SQLite connections, each wrapped so that the test can make its next commit fail after committing. */
    private final List<Connection> opened = new CopyOnWriteArrayList<>();
    private final AtomicBoolean failNextCommitAfterItCommits = new AtomicBoolean();
    /**
     * Arms {@link #failNextCommitAfterItCommits} when a grade's update is prepared, so that the
     * commit that fails is the grade's own and not that of the read that precedes it.
     */
    private final AtomicBoolean failTheNextGradesCommit = new AtomicBoolean();
    /** Thrown by the next commit instead of committing: a driver's bug, or the database's refusal. */
    private final java.util.concurrent.atomic.AtomicReference<Throwable> nextCommitThrows =
            new java.util.concurrent.atomic.AtomicReference<>();

    private JdbcResultStore open() {
        String url = "jdbc:sqlite:" + dir.resolve("r.db");
        return JdbcResultStore.open(() -> {
            Connection real = DriverManager.getConnection(url);
            Connection wrapped = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("prepareStatement")
                                && ((String) args[0]).startsWith("UPDATE panoptes_scores")
                                && failTheNextGradesCommit.compareAndSet(true, false)) {
                            failNextCommitAfterItCommits.set(true);
                        }
                        if (method.getName().equals("commit")) {
                            Throwable t = nextCommitThrows.getAndSet(null);
                            if (t != null) {
                                throw t;
                            }
                        }
                        try {
                            Object result = method.invoke(real, args);
                            if (method.getName().equals("commit") && failNextCommitAfterItCommits.compareAndSet(true,
                                    false)) {
                                throw new SQLException("connection reset while reading the reply to COMMIT");
                            }
                            return result;
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            opened.add(wrapped);
            return wrapped;
        }, url, null, "test", 1_000, Clock.systemUTC());
    }

    @Test
    void aConnectionThatBrokeIsReplacedAndTheRepeatedWriteGoesThrough() throws Exception {
        Job first = TestJobs.job("j1", "a");
        Job second = TestJobs.job("j2", "a", "b");
        try (JdbcResultStore store = open()) {
            store.record(TestJobs.echo(first), "w1");
            opened.get(0).close();

            assertThatThrownBy(() -> store.record(TestJobs.echo(second), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("cannot store the outcome of job j2 from worker w1");
            assertThat(store.record(TestJobs.echo(second), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));

            assertThat(opened).hasSize(2);
            assertThat(store.recordCount()).isEqualTo(3);
            assertThat(store.completedAmong(List.of(first, second))).containsExactlyInAnyOrder(first.id(), second.id());
        }
    }

    @Test
    void aWriteWhoseCommitOutcomeWasUnknownIsStoredOnceAndNotCountedADuplicateWhenRepeated() {
        Job job = TestJobs.job("j", "a", "b", "c");
        try (JdbcResultStore store = open()) {
            failNextCommitAfterItCommits.set(true);
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class)
                    .hasMessageContaining("connection reset while reading the reply to COMMIT");

            assertThat(store.record(TestJobs.echo(job), "w1")).as("the repeat finds its own rows")
                    .isEqualTo(new ResultStore.Receipt(3, 0));
            assertThat(store.duplicateCount()).isZero();
            assertThat(store.recordCount()).isEqualTo(3);

            // Another delivery of the job later is a duplicate, as always.
            assertThat(store.record(TestJobs.echo(job), "w2")).isEqualTo(new ResultStore.Receipt(0, 3));
            assertThat(store.duplicateCount()).isEqualTo(3);
        }
    }

    @Test
    void aWriteWhoseCommitFailedBeforeCommittingStoresEverythingWhenRepeated() throws Exception {
        Job job = TestJobs.job("j", "a", "b");
        try (JdbcResultStore store = open()) {
            store.record(TestJobs.echo(TestJobs.job("other", "x")), "w1");
            opened.get(0).close();
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class);

            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
            assertThat(store.recordCount()).isEqualTo(3);
        }
    }

    @Test
    void aGradeWhoseCommitOutcomeWasUnknownIsStoredWhenRepeatedAndTheFirstVerdictStillStands() {
        Job job = TestJobs.job("j", "a");
        ScoreEntry waiting = new ScoreEntry("judge:gpt", null, null);
        ScoreEntry verdict = new ScoreEntry("judge:gpt", 1.0, "correct");
        try (JdbcResultStore store = open()) {
            store.withScoring((v, r) -> waiting).record(job, TestJobs.echo(job), "w1");
            failTheNextGradesCommit.set(true);
            assertThatThrownBy(() -> store.recordGrade(job.id(), "v0", verdict)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("store the grade of").hasMessageContaining("reply to COMMIT");
            assertThat(failNextCommitAfterItCommits).as("the grade's own commit failed").isFalse();
            assertThat(scores(store)).as("committed, though its commit failed").containsExactly(verdict);

            assertThat(store.recordGrade(job.id(), "v0", verdict)).as("its own grade, committed after all").isTrue();
            assertThat(store.recordGrade(job.id(), "v0", new ScoreEntry("judge:gpt", 0.0, "wrong")))
                    .as("a later verdict").isFalse();
            assertThat(store.recordGrade(job.id(), "v0", verdict)).as("the same verdict again, not in doubt")
                    .isFalse();
            assertThat(scores(store)).as("the grade, stored once").containsExactly(verdict);
        }
    }

    @Test
    void aGradeInDoubtThatAnotherVerdictBeatIsNotReportedStored() {
        Job job = TestJobs.job("j", "a");
        ScoreEntry waiting = new ScoreEntry("judge:gpt", null, null);
        ScoreEntry first = new ScoreEntry("judge:gpt", 1.0, "correct");
        ScoreEntry second = new ScoreEntry("judge:gpt", 0.0, "wrong");
        try (JdbcResultStore store = open()) {
            store.withScoring((v, r) -> waiting).record(job, TestJobs.echo(job), "w1");
            failTheNextGradesCommit.set(true);
            assertThatThrownBy(() -> store.recordGrade(job.id(), "v0", first)).isInstanceOf(StoreException.class);

            assertThat(store.recordGrade(job.id(), "v0", second))
                    .as("another verdict for an answer whose grade is in doubt: the first one was committed").isFalse();
            assertThat(scores(store)).containsExactly(first);
        }
    }

    private static List<ScoreEntry> scores(JdbcResultStore store) {
        List<ScoreEntry> scores = new java.util.ArrayList<>();
        store.forEachRecord(r -> scores.add(r.score()));
        return scores;
    }

    @Test
    void aRecordItsScorerFailsOnIsStoredUnscoredWithTheReasonAndTheStoreGoesOn() {
        Job bad = TestJobs.job("bad", "a");
        Job good = TestJobs.job("good", "a");
        try (JdbcResultStore store = open()) {
            store.withScoring((v, r) -> {
                if (r.response().contains("boom")) {
                    throw new IllegalStateException("the scorer cannot read '" + r.response() + "'");
                }
                return new ScoreEntry("exact", 1.0, null);
            });
            assertThat(store.record(bad, new dev.panoptes.control.JobOutcome(bad.id(),
                    List.of(new dev.panoptes.control.ResponseRecord("v0", "boom"))), "w1"))
                    .isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(store.record(good, TestJobs.echo(good), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));

            java.util.Map<String, ScoreEntry> scores = new java.util.HashMap<>();
            store.forEachRecord(r -> scores.put(r.jobId().value(), r.score()));
            assertThat(scores.get("bad")).isEqualTo(new ScoreEntry("(unnamed scorer)", null,
                    "not scored: the scorer failed: java.lang.IllegalStateException: the scorer cannot read 'boom'"));
            assertThat(scores.get("good")).isEqualTo(new ScoreEntry("exact", 1.0, null));
            assertThat(opened).as("nothing wrong with the connection").hasSize(1);
        }
    }

    @Test
    void aDriversOwnExceptionIsAStoreFailureToRetryNotTheDataRefused() {
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = open()) {
            nextCommitThrows.set(new IllegalStateException("a bug in the driver"));
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class).hasMessageContaining("a bug in the driver");
            nextCommitThrows.set(new NullPointerException("another"));
            assertThatThrownBy(() -> store.recordFailure(job.id(), "gave up", 3)).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class).hasMessageContaining("another");

            assertThat(store.record(TestJobs.echo(job), "w1")).as("the retry").isEqualTo(new ResultStore.Receipt(1, 0));
        }
    }

    @Test
    void onlyTheDatabasesDataAndConstraintErrorsRefuseTheData() {
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = open()) {
            nextCommitThrows.set(new SQLException("could not serialize access", "40001"));
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class);
            nextCommitThrows.set(new SQLException("disk full", "53100"));
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class);
            nextCommitThrows.set(new SQLException("value too long for type character varying(8)", "22001"));
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1"))
                    .isInstanceOf(RecordRejectedException.class);
            nextCommitThrows.set(new SQLException("violates check constraint", "23514"));
            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1"))
                    .isInstanceOf(RecordRejectedException.class);

            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));
        }
    }

    @Test
    void aDatabaseLockedByAnotherConnectionFailsAfterTheBusyTimeoutAndTheWriteGoesThroughOnceItIsFree()
            throws Exception {
        Path file = dir.resolve("locked.db");
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(file, Duration.ofMillis(50));
             Connection other = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement s = other.createStatement()) {
            s.execute("BEGIN EXCLUSIVE");

            assertThatThrownBy(() -> store.record(TestJobs.echo(job), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class).hasMessageContaining("SQLITE_BUSY");

            s.execute("COMMIT");
            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));
        }
    }

    @Test
    void aNegativeBusyTimeoutIsRefused() {
        assertThatThrownBy(() -> JdbcResultStore.openSqlite(dir.resolve("r.db"), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("busy timeout");
    }
}
