package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.RequestKey;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema version 4 on SQLite: each record keeps its request's key and, when served from the
 * cache, the run it copies; a version 3 database is upgraded, its records kept without keys.
 */
class JdbcResultStoreV4Test {
    private static final SpecParams ZERO = new SpecParams(null, 0.0, null, null, "m").withModelSource("model-id test");

    @TempDir
    Path dir;

    private Path db() {
        return dir.resolve("r.db");
    }

    private static Job job(String id, String run, Vignette v) {
        return new Job(JobId.of(id), new EvalSpec("s", List.of(v), ZERO), run, 0);
    }

    private static JobOutcome answer(Job job) {
        return new JobOutcome(job.id(), List.of(new ResponseRecord(job.spec().vignettes().get(0).id(), "4")));
    }

    private void execute(String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db().toAbsolutePath());
             Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }

    private int schemaVersion() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db().toAbsolutePath());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT MAX(version) FROM panoptes_schema")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void aVersion3DatabaseIsUpgradedItsRecordsKeptWithoutKeysAndNeverServed() throws Exception {
        checkUpgradeFromVersion3(this::execute, () -> JdbcResultStore.openSqlite(db()));
        assertThat(schemaVersion()).isEqualTo(JdbcResultStore.SCHEMA_VERSION);
    }

    /** Runs SQL on the database under test. */
    interface Sql {
        void execute(String... statements) throws Exception;
    }

    /**
     * A version 3 database (the current one with the columns of versions 4 and 5 and their index dropped) opens
     * upgraded: its record is kept, without a key and never served; a record stored now is found
     * by its key. Shared with {@link PostgresResultStoreTest}.
     */
    static void checkUpgradeFromVersion3(Sql sql, java.util.function.Supplier<JdbcResultStore> open) throws Exception {
        Vignette v = new Vignette("q1", "2+2?");
        Job old = job("aaaa-m-e0-0000", "aaaa", v);
        try (JdbcResultStore store = open.get()) {
            store.record(old, answer(old), "w");
        }
        // Version 7 keeps that index on PostgreSQL only, and on SQLite keys the records in tables of its own.
        sql.execute("DROP INDEX IF EXISTS panoptes_records_request_key",
                "DROP TABLE IF EXISTS panoptes_request_keys", "DROP TABLE IF EXISTS panoptes_request_key_mark",
                "ALTER TABLE panoptes_records DROP COLUMN request_key",
                "ALTER TABLE panoptes_records DROP COLUMN cached_from",
                "ALTER TABLE panoptes_records DROP COLUMN transcript",
                "UPDATE panoptes_schema SET version = 3");

        try (JdbcResultStore store = open.get()) {
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).singleElement().satisfies(r -> {
                assertThat(r.record().response()).isEqualTo("4");
                assertThat(r.cachedFrom()).isNull();
            });
            String key = RequestKey.of(old, v);
            assertThat(store.answerCache().lookUp(List.of(key), Instant.EPOCH)).isEmpty();

            Job next = job("bbbb-m-e0-0000", "bbbb", v);
            store.record(next, answer(next), "w");
            assertThat(store.answerCache().lookUp(List.of(key), Instant.EPOCH)).containsOnlyKeys(key);
            assertThat(store.answerCache().lookUp(List.of(key), Instant.EPOCH).get(key).runId()).isEqualTo("bbbb");
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).as("opened again: nothing upgraded twice or lost").isEqualTo(2);
        }
    }
}
