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
import java.util.List;
import java.util.function.Function;

/**
 * The SQL of {@code panoptes_records} beyond storing an outcome: reading a row back as a
 * {@link StoredRecord}, and writing scores. Each method works in the connection's current
 * transaction; the {@link JdbcResultStore} that owns the connection commits.
 */
final class RecordRows {
    /** Every column, in the order {@link #storedRecord} reads them. */
    static final String SELECT = "SELECT job_id, vignette_id, response, model, finish_reason, latency_ms, "
            + "prompt_tokens, completion_tokens, worker_id, stored_at, run_id, run_model, epoch, prompt, expected, "
            + "metadata, scorer, score, explanation, error FROM panoptes_records";

    private RecordRows() {
    }

    /** The row the result set is on, selected with {@link #SELECT}. */
    static StoredRecord storedRecord(ResultSet rs) throws SQLException {
        Long prompt = getLong(rs, 7);
        Long completion = getLong(rs, 8);
        Usage usage = prompt == null && completion == null ? null
                : new Usage(prompt == null ? 0 : prompt, completion == null ? 0 : completion);
        ResponseRecord record = new ResponseRecord(rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getString(5), getLong(rs, 6), usage, rs.getString(20));
        RecordContext context = new RecordContext(rs.getString(11), rs.getString(12), rs.getInt(13),
                rs.getString(14), rs.getString(15), rs.getString(16));
        String scorer = rs.getString(17);
        double score = rs.getDouble(18);
        Double scoreOrNull = rs.wasNull() ? null : score;
        ScoreEntry entry = scorer == null ? null : new ScoreEntry(scorer, scoreOrNull, rs.getString(19));
        return new StoredRecord(JobId.of(rs.getString(1)), record, rs.getString(9),
                Instant.ofEpochMilli(rs.getLong(10)), context, entry);
    }

    /**
     * Sets a grade on an answer that has none yet (no score, and no reason for having none): the
     * first verdict stands, readable or not. @return true when it did
     */
    static boolean grade(Connection c, JobId jobId, String vignetteId, ScoreEntry grade) throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE panoptes_records SET scorer = ?, score = ?, "
                + "explanation = ? WHERE job_id = ? AND vignette_id = ? AND score IS NULL AND explanation IS NULL")) {
            setScore(update, grade);
            update.setString(4, jobId.value());
            update.setString(5, vignetteId);
            return update.executeUpdate() == 1;
        }
    }

    /** The score of a stored answer (null when it has none, or is not there). */
    static ScoreEntry score(Connection c, JobId jobId, String vignetteId) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT scorer, score, explanation FROM panoptes_records "
                + "WHERE job_id = ? AND vignette_id = ?")) {
            q.setString(1, jobId.value());
            q.setString(2, vignetteId);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next() || rs.getString(1) == null) {
                    return null;
                }
                double score = rs.getDouble(2);
                Double scoreOrNull = rs.wasNull() ? null : score;
                return new ScoreEntry(rs.getString(1), scoreOrNull, rs.getString(3));
            }
        }
    }

    /** Replaces the score of each record with what {@code scorer} gives it (null clears it). */
    static void rescore(Connection c, List<StoredRecord> records, Function<StoredRecord, ScoreEntry> scorer)
            throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE panoptes_records SET scorer = ?, score = ?, "
                + "explanation = ? WHERE job_id = ? AND vignette_id = ?")) {
            for (StoredRecord r : records) {
                setScore(update, scorer.apply(r));
                update.setString(4, r.jobId().value());
                update.setString(5, r.record().vignetteId());
                update.addBatch();
            }
            update.executeBatch();
        }
    }

    /** Parameters 1 to 3: scorer, score, explanation. */
    private static void setScore(PreparedStatement ps, ScoreEntry e) throws SQLException {
        ps.setString(1, e == null ? null : e.scorer());
        setDouble(ps, 2, e == null ? null : e.score());
        ps.setString(3, e == null ? null : e.explanation());
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
