package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The tables of a {@link JdbcResultStore}, created on first use and brought up to
 * {@link #VERSION} from older versions. Plain SQL that SQLite and PostgreSQL both take.
 *
 * <p>Version 2 keeps each record's run, model asked, epoch, prompt, expected answer, metadata and
 * score, each failure's run and model, and adds the runs and per-worker events tables. Version 1
 * records get their run id from their job id (its first 16 characters, as jobs were named).
 * Version 3 adds each record's {@code error}: null for an answer, the model API's reason for a
 * failed answer (a vignette whose request was refused for what it holds); older records are
 * answers.
 */
final class StoreSchema {
    /** The schema version this code writes and reads. */
    static final int VERSION = 3;

    private static final List<String> RECORD_COLUMNS_V2 = List.of(
            "run_id TEXT", "run_model TEXT", "epoch INTEGER", "prompt TEXT", "expected TEXT", "metadata TEXT",
            "scorer TEXT", "score DOUBLE PRECISION", "explanation TEXT");
    private static final List<String> FAILURE_COLUMNS_V2 = List.of("run_id TEXT", "run_model TEXT");
    private static final List<String> RECORD_COLUMNS_V3 = List.of("error TEXT");

    private StoreSchema() {
    }

    /**
     * Creates or upgrades the tables, in the connection's current transaction (the caller commits).
     *
     * @throws StoreException when the database holds a newer schema
     */
    static void prepare(Connection connection, String description) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_schema (version INTEGER NOT NULL)");
            Integer version = null;
            try (ResultSet rs = s.executeQuery("SELECT MAX(version) FROM panoptes_schema")) {
                if (rs.next()) {
                    int v = rs.getInt(1);
                    version = rs.wasNull() ? null : v;
                }
            }
            if (version != null && version > VERSION) {
                throw new StoreException("result database " + description + " has schema version " + version
                        + ", newer than the " + VERSION + " this Panoptes understands; use a newer Panoptes", null);
            }
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_records ("
                    + "job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, response TEXT NOT NULL, "
                    + "model TEXT, finish_reason TEXT, latency_ms BIGINT, prompt_tokens BIGINT, "
                    + "completion_tokens BIGINT, worker_id TEXT NOT NULL, stored_at BIGINT NOT NULL, "
                    + (version == null ? String.join(", ", RECORD_COLUMNS_V2) + ", "
                            + String.join(", ", RECORD_COLUMNS_V3) + ", " : "")
                    + "PRIMARY KEY (job_id, vignette_id))");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_failures ("
                    + "job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, attempts INTEGER NOT NULL, "
                    + "failed_at BIGINT NOT NULL"
                    + (version == null ? ", " + String.join(", ", FAILURE_COLUMNS_V2) : "") + ")");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_runs (run_id VARCHAR(64) NOT NULL PRIMARY KEY, "
                    + "suite TEXT NOT NULL, models TEXT NOT NULL, scorer TEXT NOT NULL, epochs INTEGER NOT NULL, "
                    + "vignettes INTEGER NOT NULL, started_at BIGINT NOT NULL)");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_worker_events (run_id VARCHAR(64) NOT NULL, "
                    + "worker_id VARCHAR(256) NOT NULL, failures BIGINT NOT NULL, quarantines BIGINT NOT NULL, "
                    + "PRIMARY KEY (run_id, worker_id))");
            if (version != null && version < 2) {
                for (String column : RECORD_COLUMNS_V2) {
                    s.execute("ALTER TABLE panoptes_records ADD COLUMN " + column);
                }
                for (String column : FAILURE_COLUMNS_V2) {
                    s.execute("ALTER TABLE panoptes_failures ADD COLUMN " + column);
                }
                s.execute("UPDATE panoptes_records SET run_id = substr(job_id, 1, 16), epoch = 0");
                s.execute("UPDATE panoptes_failures SET run_id = substr(job_id, 1, 16)");
            }
            if (version != null && version < 3) {
                for (String column : RECORD_COLUMNS_V3) {
                    s.execute("ALTER TABLE panoptes_records ADD COLUMN " + column);
                }
            }
            if (version == null) {
                s.execute("INSERT INTO panoptes_schema (version) VALUES (" + VERSION + ")");
            } else if (version < VERSION) {
                s.execute("UPDATE panoptes_schema SET version = " + VERSION);
            }
        }
    }
}
