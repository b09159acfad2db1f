package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.suite.RunManifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code runs show} reads of a run that was interrupted and resumed: each start is a sitting,
 * ended with the answers stored during it when the run stops or finishes, and a sitting whose end
 * was never noted (its coordinator killed) ends at its last answer, counting the answers stored
 * before the next start. The run's manifest columns are there for a user's own SQL.
 */
class RunSittingsTest {
    private static final String RUN = "r1";

    @TempDir
    Path dir;

    /** A clock the test moves. */
    private static final class StepClock extends Clock {
        long millis;

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }
    }

    private static void answer(JdbcResultStore store, String id) {
        Job job = new Job(JobId.of(id), new EvalSpec("s", List.of(new Vignette("v-" + id, "q")),
                SpecParams.NONE.withModel("m")), RUN, 0);
        store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("v-" + id, "a"))), "w1");
    }

    private static RunEntry start(long at) {
        return new RunEntry(RUN, "s.jsonl", List.of("m"), "exact", 1, 9, Instant.ofEpochMilli(at));
    }

    @Test
    void eachSittingEndsWithTheAnswersStoredDuringItAndAKilledOneEndsAtItsLastAnswer() {
        StepClock clock = new StepClock();
        Path db = dir.resolve("r.db");
        try (JdbcResultStore store = JdbcResultStore.open("jdbc:sqlite:" + db, clock)) {
            assertThat(store.runs()).isEmpty();
            store.endSitting(RUN); // no run, no sitting: nothing to end

            clock.millis = 1_000;
            store.recordRun(start(1_000));
            clock.millis = 1_100;
            answer(store, "j1");
            clock.millis = 1_200;
            answer(store, "j2");
            clock.millis = 1_500;
            store.endSitting(RUN); // interrupted
            store.endSitting(RUN); // no sitting open any more: the first end stands
            clock.millis = 2_000;
            store.recordRun(start(2_000)); // resumed, then its coordinator killed: no end noted
            clock.millis = 2_300;
            answer(store, "j3");
            clock.millis = 3_000;
            store.recordRun(start(3_000));
            clock.millis = 3_100;
            answer(store, "j4");
            clock.millis = 3_900;
            store.finishRun(RUN);

            RunEntry run = store.runs().get(0);
            assertThat(run.finishedAt()).isEqualTo(Instant.ofEpochMilli(3_900));
            assertThat(run.sittings()).containsExactly(
                    new RunSitting(1, Instant.ofEpochMilli(1_000), Instant.ofEpochMilli(1_500), 2, true),
                    new RunSitting(2, Instant.ofEpochMilli(2_000), Instant.ofEpochMilli(2_300), 1, false),
                    new RunSitting(3, Instant.ofEpochMilli(3_000), Instant.ofEpochMilli(3_900), 1, true));
        }
    }

    @Test
    void aSittingWithoutAnswersEndsWhereItStartedAndAnOpenOneCountsWhatWasStoredSoFar() {
        StepClock clock = new StepClock();
        try (JdbcResultStore store = JdbcResultStore.open("jdbc:sqlite:" + dir.resolve("r.db"), clock)) {
            clock.millis = 1_000;
            store.recordRun(start(1_000));
            clock.millis = 2_000;
            store.recordRun(start(2_000));
            clock.millis = 2_500;
            answer(store, "j1");

            assertThat(store.runs().get(0).sittings()).containsExactly(
                    new RunSitting(1, Instant.ofEpochMilli(1_000), Instant.ofEpochMilli(1_000), 0, false),
                    new RunSitting(2, Instant.ofEpochMilli(2_000), Instant.ofEpochMilli(2_500), 1, false));
            assertThat(store.runs().get(0).finishedAt()).isNull();
        }
    }

    @Test
    void theManifestsToolVersionAndSuiteDigestAreColumnsForSql() throws Exception {
        Path db = dir.resolve("r.db");
        RunManifest manifest = new RunManifest(1, "1.2.3", "s.jsonl", "ab".repeat(32), 9, List.of(), null, null, null,
                null, 1, null, null, 1, "");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.recordRun(new RunEntry(RUN, "s.jsonl", List.of("m"), "exact", 1, 9, Instant.ofEpochMilli(1_000),
                    manifest, Instant.ofEpochMilli(5_000)));
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT tool_version, suite_sha256, finished_at FROM panoptes_runs")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("1.2.3");
            assertThat(rs.getString(2)).isEqualTo("ab".repeat(32));
            assertThat(rs.getLong(3)).isEqualTo(5_000);
        }
    }
}
