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
 *
 * <p>Version 3 keeps each run's manifest (JSON, see
 * {@link dev.panoptes.control.suite.RunManifest}), tool version, suite hash and end time, each
 * record's {@code error} (a failed answer), and moves scores out of the records into versioned
 * scorings: {@code panoptes_scorings} (run, number from 1, scorer spec, created, origin {@code run}
 * or {@code rescore}) and {@code panoptes_scores} (one row per answer and scoring). A version 2
 * database's in-record scores become scoring 1 of each run (its scorer the one its records name
 * when they agree, else the run's); the old score columns stay, unused, and its runs read as
 * legacy (no manifest).
 *
 * <p>Version 4 keeps with each record of a temperature-0 request the
 * {@link dev.panoptes.control.RequestKey} of the request that produced it ({@code request_key},
 * indexed (on SQLite since version 7: keyed in bulk, see below): the response cache looks answers up by it; null for any other request, which is never
 * served from the cache and would only cost the index a random write) and,
 * for an answer served from the cache, the run whose answer it copies ({@code cached_from}). Records
 * of older versions keep both null: they are never served from the cache.
 *
 * <p>Version 5 keeps with each record of a vignette run in a sandbox its transcript
 * ({@code transcript}, the JSON {@link dev.panoptes.control.Transcripts} reads: every model turn,
 * tool call, output as shown, exit status, duration and tokens); null for any other answer and for
 * the records of older versions. It is a column of the record, so the one insert that stores an
 * answer stores its transcript: a redelivered sample stores neither twice.
 *
 * <p>Version 6 keeps what each sitting of a run spent on model calls whose answers were never
 * stored ({@code panoptes_unstored}: run, sitting number, model, attempts, prompt and completion
 * tokens; one row per sitting and model, see {@link UnstoredSpend}), written when the sitting ends.
 * A version 5 database gets the table, empty: its runs' earlier sittings kept no such spend. The
 * version is raised, although the table alone would need no upgrade, so that an older Panoptes
 * refuses the database: it would delete a run without these rows, and a run started again under
 * the same id would inherit them.
 *
 * <p>Version 7 changes how records are found by request key on SQLite ({@link RequestKeyIndex}):
 * the index {@code panoptes_records_request_key} is dropped (maintaining it cost most of the store
 * thread's time per answer in a large database) and the records are keyed in bulk into
 * {@code panoptes_request_keys} when a sitting ends and before the cache looks, how far in
 * {@code panoptes_request_key_mark}. A version 6 SQLite database gets both tables and every record
 * keyed, sorted, in the upgrade's transaction. On PostgreSQL nothing changes (its index stays); the
 * version is raised there too, one version for both, and an older Panoptes refuses a version 7
 * SQLite database, whose records it would store without keying them.
 *
 * <p>Any version: {@code panoptes_sittings} keeps each start of a run (run, number from 1, start,
 * end and answers stored when the coordinator noted its end), created when missing; runs noted
 * before it existed have no sittings. {@code panoptes_stops} keeps what stopped a sitting (run,
 * sitting number, cause {@code budget} or {@code gate}, reason), likewise created when missing.
 * On SQLite, a {@code panoptes_scores} created by this code is a {@code WITHOUT ROWID} table (its
 * rows kept in its primary key's b-tree); one created before keeps its rowid. The two are read and
 * written by the same SQL, so the version is not raised for it.
 */
final class StoreSchema {
    /** The schema version this code writes and reads. */
    static final int VERSION = 7;

    /** The columns version 2 added to the records, in the order it added them. */
    private static final List<String> RECORD_COLUMNS_V2 = List.of(
            "run_id TEXT", "run_model TEXT", "epoch INTEGER", "prompt TEXT", "expected TEXT", "metadata TEXT",
            "scorer TEXT", "score DOUBLE PRECISION", "explanation TEXT");
    /** The record columns of a database created at version 3: the context, without scores. */
    private static final List<String> RECORD_COLUMNS_V3 = List.of(
            "run_id TEXT", "run_model TEXT", "epoch INTEGER", "prompt TEXT", "expected TEXT", "metadata TEXT",
            "error TEXT");
    /** The record columns version 4 added: the request's key, and the run a cached answer copies. */
    private static final List<String> RECORD_COLUMNS_V4 = List.of("request_key TEXT", "cached_from TEXT");
    /** The record column version 5 added: a sandboxed sample's transcript. */
    private static final String RECORD_COLUMN_V5 = "transcript TEXT";
    private static final List<String> FAILURE_COLUMNS_V2 = List.of("run_id TEXT", "run_model TEXT");
    private static final List<String> RUN_COLUMNS_V3 = List.of(
            "manifest TEXT", "tool_version TEXT", "suite_sha256 TEXT", "finished_at BIGINT");

    private StoreSchema() {
    }

    /**
     * Creates or upgrades the tables, in the connection's current transaction (the caller commits),
     * with what {@code requestKeys} finds records by request key through; {@code sqlite} for SQLite's
     * own table options.
     *
     * @throws StoreException when the database holds a newer schema
     */
    static void prepare(Connection connection, String description, RequestKeyIndex requestKeys, boolean sqlite)
            throws SQLException {
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
                    + (version == null ? String.join(", ", RECORD_COLUMNS_V3) + ", "
                            + String.join(", ", RECORD_COLUMNS_V4) + ", " + RECORD_COLUMN_V5 + ", " : "")
                    + "PRIMARY KEY (job_id, vignette_id))");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_failures ("
                    + "job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, attempts INTEGER NOT NULL, "
                    + "failed_at BIGINT NOT NULL"
                    + (version == null ? ", " + String.join(", ", FAILURE_COLUMNS_V2) : "") + ")");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_runs (run_id VARCHAR(64) NOT NULL PRIMARY KEY, "
                    + "suite TEXT NOT NULL, models TEXT NOT NULL, scorer TEXT NOT NULL, epochs INTEGER NOT NULL, "
                    + "vignettes INTEGER NOT NULL, started_at BIGINT NOT NULL"
                    + (version == null ? ", " + String.join(", ", RUN_COLUMNS_V3) : "") + ")");
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
            // Each start of a run by a coordinator, and its end when noted (a table of its own, so a
            // database of any version gets it on first use and older Panoptes ignore it).
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_sittings (run_id VARCHAR(64) NOT NULL, "
                    + "number INTEGER NOT NULL, started_at BIGINT NOT NULL, ended_at BIGINT, answers BIGINT, "
                    + "PRIMARY KEY (run_id, number))");
            // What stopped a sitting (the budget, a gate): a table of its own for the same reason.
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_stops (run_id VARCHAR(64) NOT NULL, "
                    + "sitting INTEGER NOT NULL, cause VARCHAR(16) NOT NULL, reason TEXT NOT NULL, "
                    + "PRIMARY KEY (run_id, sitting))");
            // Version 6: each sitting's spend on answers never stored, per model.
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_unstored (run_id VARCHAR(64) NOT NULL, "
                    + "sitting INTEGER NOT NULL, model TEXT NOT NULL, attempts BIGINT NOT NULL, "
                    + "prompt_tokens BIGINT NOT NULL, completion_tokens BIGINT NOT NULL, "
                    + "PRIMARY KEY (run_id, sitting, model))");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_scorings (run_id VARCHAR(64) NOT NULL, "
                    + "number INTEGER NOT NULL, scorer TEXT NOT NULL, created_at BIGINT NOT NULL, "
                    + "origin VARCHAR(16) NOT NULL, PRIMARY KEY (run_id, number))");
            // On SQLite the scores live in their primary key's b-tree alone (WITHOUT ROWID): the table
            // is only ever read and written by that key, and a rowid table would keep a second b-tree
            // beside the key's, one more page to dirty and log per answer stored. A table created
            // before keeps its rowid and works the same.
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_scores (job_id VARCHAR(256) NOT NULL, "
                    + "vignette_id TEXT NOT NULL, scoring INTEGER NOT NULL, scorer TEXT NOT NULL, "
                    + "score DOUBLE PRECISION, explanation TEXT, PRIMARY KEY (job_id, vignette_id, scoring))"
                    + (sqlite ? " WITHOUT ROWID" : ""));
            if (version != null && version < 3) {
                s.execute("ALTER TABLE panoptes_records ADD COLUMN error TEXT");
                for (String column : RUN_COLUMNS_V3) {
                    s.execute("ALTER TABLE panoptes_runs ADD COLUMN " + column);
                }
                ScoreTables.migrateRecordScores(s);
            }
            if (version != null && version < 4) {
                for (String column : RECORD_COLUMNS_V4) {
                    s.execute("ALTER TABLE panoptes_records ADD COLUMN " + column);
                }
            }
            if (version != null && version < 5) {
                s.execute("ALTER TABLE panoptes_records ADD COLUMN " + RECORD_COLUMN_V5);
            }
            // Version 6 only adds panoptes_unstored, created above when missing.
            // Version 7: on SQLite the records are keyed in bulk rather than indexed (every record keyed now
            // when upgrading); PostgreSQL keeps its index.
            requestKeys.prepare(s, version);
            if (version == null) {
                s.execute("INSERT INTO panoptes_schema (version) VALUES (" + VERSION + ")");
            } else if (version < VERSION) {
                s.execute("UPDATE panoptes_schema SET version = " + VERSION);
            }
        }
    }
}
