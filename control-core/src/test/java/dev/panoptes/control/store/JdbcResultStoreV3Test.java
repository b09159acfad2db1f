package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema version 3 on SQLite: versioned scorings, failed answers, run manifests, and the upgrade
 * from version 2 ({@link ScoringsContract}; {@link PostgresResultStoreTest} runs the same checks on
 * PostgreSQL).
 */
class JdbcResultStoreV3Test {
    @TempDir
    Path dir;

    private Path db() {
        return dir.resolve("r.db");
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
    void aVersion2DatabaseIsUpgradedKeepingRecordsRunsAndFailuresItsScoresBecomingScoring1() throws Exception {
        ScoringsContract.writeVersion2(this::execute);
        ScoringsContract.checkUpgradedVersion2(() -> JdbcResultStore.openSqlite(db()));
        assertThat(schemaVersion()).isEqualTo(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void rescoreAddsScoring2AndLeavesScoring1Intact() {
        ScoringsContract.checkRescoreAddsAScoringAndKeepsTheFirst(() -> JdbcResultStore.openSqlite(db()));
    }

    @Test
    void failedAnswersGetZeroInEveryScoringAndAreNeverScored() {
        ScoringsContract.checkFailedAnswersGetZeroInEveryScoringAndAreNeverScored(
                () -> JdbcResultStore.openSqlite(db()));
    }

    @Test
    void aRunsManifestAndEndAreKept() {
        ScoringsContract.checkManifestsAndEndsAreKept(() -> JdbcResultStore.openSqlite(db()));
    }
}
