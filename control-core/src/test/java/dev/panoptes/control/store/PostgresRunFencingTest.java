package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A store fenced by its run's lease ({@link JdbcResultStore#fencedBy}, {@link RunLeases}) on a real
 * PostgreSQL server: once another coordinator takes the run over, no write of the old holder
 * commits, whether it starts after the takeover or was under way when it began.
 */
@Timeout(60)
class PostgresRunFencingTest {
    private static final String RUN = "run-fenced";
    private static final long IDLE_MS = 30_000;

    private final TestPostgres.Database db = TestPostgres.freshDatabase();

    private static Job job(String id) {
        return new Job(JobId.of(id), new EvalSpec("s", List.of(new Vignette("v0", "p")), SpecParams.NONE.withModel("m")),
                RUN, 0);
    }

    private static JobOutcome answer(Job job) {
        return new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "a")));
    }

    private long take(String holder) throws SQLException {
        try (Connection c = db.connect()) {
            return RunLeases.take(c, RUN, holder, Instant.now());
        }
    }

    private long rows() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement q = c.prepareStatement(
                "SELECT count(*) FROM panoptes_records WHERE run_id = ?")) {
            q.setString(1, RUN);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void takingTheLeaseAddsOneToItsEpochAndNamesTheTaker() throws SQLException {
        assertThat(take("first")).isEqualTo(1);
        assertThat(take("second")).isEqualTo(2);
        try (Connection c = db.connect()) {
            RunLeases.Lease lease = RunLeases.current(c, RUN);
            assertThat(lease.epoch()).isEqualTo(2);
            assertThat(lease.holder()).isEqualTo("second");
            assertThat(RunLeases.current(c, "another run")).isNull();
        }
    }

    @Test
    void aStoreWhoseRunWasTakenOverStoresNothingMoreAndSaysWhoTookIt() throws SQLException {
        long mine = take("primary");
        try (JdbcResultStore store = db.open().fencedBy(RUN, mine, IDLE_MS)) {
            Job first = job("j1");
            store.record(first, answer(first), "w");
            assertThat(rows()).isEqualTo(1);

            take("standby pid=42");

            Job second = job("j2");
            assertThatThrownBy(() -> store.record(second, answer(second), "w"))
                    .isInstanceOf(StoreFencedException.class)
                    .hasMessage("run " + RUN + " was taken over by another coordinator (standby pid=42, takeover epoch 2"
                            + " since %s); this coordinator held epoch 1 and stores nothing more",
                            currentTakenAt());
            assertThatThrownBy(() -> store.endSitting(RUN)).isInstanceOf(StoreFencedException.class);
            assertThatThrownBy(() -> store.recordFailure(second.id(), "boom", 1))
                    .isInstanceOf(StoreFencedException.class);
            assertThat(rows()).isEqualTo(1);
        }
    }

    @Test
    void aTakeoverWaitsForTheWriteUnderWayWhichCommitsUnderTheOldEpochAndTheNextWriteIsFenced() throws Exception {
        long mine = take("primary");
        try (JdbcResultStore store = db.open().fencedBy(RUN, mine, IDLE_MS)) {
            Job first = job("j1");
            store.record(first, answer(first), "w");
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            // A rescore scores inside its write transaction: held there, it is a write under way.
            CompletableFuture<Scoring> rescore = CompletableFuture.supplyAsync(() -> store.rescore(RUN, "exact", r -> {
                inside.countDown();
                try {
                    assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return null;
            }));
            assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Long> takeover = CompletableFuture.supplyAsync(() -> {
                try {
                    return take("standby");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            // The taker waits on the lease's row, which the write holds until it commits.
            await().atMost(Duration.ofSeconds(30)).until(this::aSessionWaitsOnARowLock);
            assertThat(takeover).isNotDone();
            release.countDown();
            assertThat(rescore.get(30, TimeUnit.SECONDS).origin()).isEqualTo(Scoring.RESCORE);
            assertThat(takeover.get(30, TimeUnit.SECONDS)).isEqualTo(2);

            Job second = job("j2");
            assertThatThrownBy(() -> store.record(second, answer(second), "w")).isInstanceOf(StoreFencedException.class);
            assertThat(rows()).isEqualTo(1);
        }
    }

    @Test
    void aWriterFrozenInsideItsTransactionHoldsUpATakeoverNoLongerThanItsIdleTime() throws Exception {
        long mine = take("primary");
        try (JdbcResultStore store = db.open().fencedBy(RUN, mine, 500)) {
            Job first = job("j1");
            store.record(first, answer(first), "w");
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Scoring> frozen = CompletableFuture.supplyAsync(() -> store.rescore(RUN, "exact", r -> {
                inside.countDown();
                try {
                    assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return null;
            }));
            assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
            // The server ends the frozen writer's session after 500 ms idle in its transaction.
            assertThat(take("standby")).isEqualTo(2);
            release.countDown();
            assertThatThrownBy(() -> frozen.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(StoreException.class);
            assertThat(rows()).isEqualTo(1);
            Job second = job("j2");
            assertThatThrownBy(() -> store.record(second, answer(second), "w")).isInstanceOf(StoreFencedException.class);
            assertThat(rows()).isEqualTo(1);
        }
    }

    private boolean aSessionWaitsOnARowLock() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement q = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
             ResultSet rs = q.executeQuery()) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    private Instant currentTakenAt() throws SQLException {
        try (Connection c = db.connect()) {
            return RunLeases.current(c, RUN).takenAt();
        }
    }
}
