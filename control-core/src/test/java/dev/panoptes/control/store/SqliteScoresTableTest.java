package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On SQLite, a new database keeps its scores in their primary key's b-tree alone (a
 * {@code WITHOUT ROWID} table: one b-tree written per score instead of two); a database whose
 * scores table was made with a rowid, as every one before, is left so and scores, rescores and
 * reads the same.
 */
class SqliteScoresTableTest extends SqliteFileStoreTest {
    private String scoresTableSql() throws Exception {
        try (Connection c = plain(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT sql FROM sqlite_master WHERE type = 'table' "
                     + "AND name = 'panoptes_scores'")) {
            assertThat(rs.next()).as("panoptes_scores exists").isTrue();
            return rs.getString(1);
        }
    }

    @Test
    void aNewDatabaseKeepsItsScoresWithoutARowid() throws Exception {
        open().close();
        assertThat(scoresTableSql()).endsWith("WITHOUT ROWID");

        ScoringsContract.checkRescoreAddsAScoringAndKeepsTheFirst(this::open);
    }

    @Test
    void aScoresTableWithARowidFromBeforeIsKeptAndWorksTheSame() throws Exception {
        open().close();
        // The table as every database before this change made it.
        execute("DROP TABLE panoptes_scores",
                "CREATE TABLE panoptes_scores (job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                        + "scoring INTEGER NOT NULL, scorer TEXT NOT NULL, score DOUBLE PRECISION, explanation TEXT, "
                        + "PRIMARY KEY (job_id, vignette_id, scoring))");

        ScoringsContract.checkRescoreAddsAScoringAndKeepsTheFirst(this::open);

        assertThat(scoresTableSql()).as("opening does not rebuild the table").doesNotContain("WITHOUT ROWID");
        try (Connection c = plain(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_scores WHERE rowid > 0")) {
            rs.next();
            assertThat(rs.getInt(1)).as("scores stored in the rowid table").isPositive();
        }
    }
}
