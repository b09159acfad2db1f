package dev.panoptes.control.store;

import dev.panoptes.control.JobId;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * The SQL of {@code panoptes_records} beyond storing an outcome: reading a row back as a
 * {@link StoredRecord} (with its score in one scoring, see {@link ScoreTables#selectRecords}).
 * Each method works in the connection's current transaction; the {@link JdbcResultStore} that
 * owns the connection commits.
 */
final class RecordRows {
    /**
     * Every column, in the order {@link #storedRecord} reads them, of the records ({@code r}) and
     * of their scores ({@code s}, which the caller joins: see {@link ScoreTables#selectRecords}).
     */
    static final String SELECT = "SELECT r.job_id, r.vignette_id, r.response, r.model, r.finish_reason, "
            + "r.latency_ms, r.prompt_tokens, r.completion_tokens, r.worker_id, r.stored_at, r.run_id, r.run_model, "
            + "r.epoch, r.prompt, r.expected, r.metadata, s.scorer, s.score, s.explanation, r.error, "
            + "r.cached_from, r.transcript FROM panoptes_records r";

    /** How a stored log-likelihood answer begins (its JSON's first key): such answers are short. */
    private static final String CHOICE_ANSWER = "substr(r.response, 1, 9) = '{\"resps\":'";

    /**
     * {@link #SELECT} without the texts: the response reads as empty, and the prompt, the expected
     * answer, the score's explanation and the transcript as null. What a run's figures need (counts, scores,
     * tokens, latencies, metadata), without reading the bulk of each row. Two exceptions, which
     * the multiple-choice figures recompute from: an answer asked by log-likelihood (its response
     * begins {@code {"resps":}) keeps its response and expected answer, both short, and a failed
     * answer keeps its expected answer (it counts 0 in those figures).
     */
    static final String SELECT_FIGURES = SELECT
            .replace("r.response,", "CASE WHEN " + CHOICE_ANSWER + " THEN r.response ELSE '' END AS response,")
            .replace("r.prompt,", "NULL AS prompt,")
            .replace("r.expected,", "CASE WHEN r.error IS NOT NULL OR " + CHOICE_ANSWER
                    + " THEN r.expected END AS expected,")
            .replace("s.explanation,", "NULL AS explanation,").replace("r.transcript", "NULL AS transcript");

    /** Rows a cursor over the records reads from the database at a time. */
    static final int FETCH_ROWS = 512;

    private RecordRows() {
    }

    /**
     * Gives each stored record of a run ({@code runId}; every run when null), in the order of
     * storing, with its score in scoring {@code scoring} of its run (0: the latest).
     */
    static void forEach(Connection c, String runId, int scoring, Consumer<StoredRecord> action) throws SQLException {
        forEach(c, runId, scoring, true, action);
    }

    /** As {@link #forEach(Connection, String, int, Consumer)}; without the texts unless {@code texts} ({@link #SELECT_FIGURES}). */
    static void forEach(Connection c, String runId, int scoring, boolean texts, Consumer<StoredRecord> action)
            throws SQLException {
        try (PreparedStatement q = c.prepareStatement(ScoreTables.selectRecords(scoring, texts)
                + (runId == null ? "" : " WHERE r.run_id = ?") + " ORDER BY r.stored_at, r.job_id, r.vignette_id")) {
            if (runId != null) {
                q.setString(1, runId);
            }
            // A forward-only cursor read FETCH_ROWS at a time, so that a run's million records pass
            // through the caller without being held: PostgreSQL's driver otherwise reads the whole
            // result into memory first (it streams only so, and only outside autocommit, which the
            // store's connection is); SQLite steps through its rows anyway.
            q.setFetchSize(FETCH_ROWS);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    action.accept(storedRecord(rs));
                }
            }
        }
    }

    /** The number of records of a run ({@code runId}), or of all when null. */
    static long count(Connection c, String runId) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT COUNT(*) FROM panoptes_records"
                + (runId == null ? "" : " WHERE run_id = ?"))) {
            if (runId != null) {
                q.setString(1, runId);
            }
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The row the result set is on, selected with {@link #SELECT}. */
    static StoredRecord storedRecord(ResultSet rs) throws SQLException {
        Long prompt = getLong(rs, 7);
        Long completion = getLong(rs, 8);
        Usage usage = prompt == null && completion == null ? null
                : new Usage(prompt == null ? 0 : prompt, completion == null ? 0 : completion);
        ResponseRecord record = new ResponseRecord(rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getString(5), getLong(rs, 6), usage, rs.getString(20), rs.getString(22));
        RecordContext context = new RecordContext(rs.getString(11), rs.getString(12), rs.getInt(13),
                rs.getString(14), rs.getString(15), rs.getString(16));
        String scorer = rs.getString(17);
        double score = rs.getDouble(18);
        Double scoreOrNull = rs.wasNull() ? null : score;
        ScoreEntry entry = scorer == null ? null : new ScoreEntry(scorer, scoreOrNull, rs.getString(19));
        return new StoredRecord(JobId.of(rs.getString(1)), record, rs.getString(9),
                Instant.ofEpochMilli(rs.getLong(10)), context, entry, rs.getString(21));
    }

    static void setLong(PreparedStatement ps, int index, Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }

    static void setDouble(PreparedStatement ps, int index, Double value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.DOUBLE);
        } else {
            ps.setDouble(index, value);
        }
    }

    static Long getLong(ResultSet rs, int index) throws SQLException {
        long v = rs.getLong(index);
        return rs.wasNull() ? null : v;
    }
}
