package dev.panoptes.control.store;

import dev.panoptes.control.JobId;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The SQL of versioned scorings: {@code panoptes_scorings} (one row per scoring of a run) and
 * {@code panoptes_scores} (one row per answer and scoring). A scoring, once made, only gains the
 * grades of answers that waited for one (a judge's); nothing here changes a score that is there.
 * Each method works in the connection's current transaction; the {@link JdbcResultStore} that owns
 * the connection commits, rolls back and names failures.
 */
final class ScoreTables {
    /** Stores one answer's score in one scoring; parameters: job, vignette, scoring, then {@link #setScore}'s. */
    static final String INSERT_SCORE = "INSERT INTO panoptes_scores (job_id, vignette_id, scoring, scorer, score, "
            + "explanation) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, vignette_id, scoring) DO NOTHING";

    private ScoreTables() {
    }

    /**
     * The run a scoring belongs to: the run's id, or the empty string for the answers of jobs that
     * belong to no run (a library user's scheduler), which share that one set of scorings.
     */
    static String runKey(String runId) {
        return runId == null ? "" : runId;
    }

    /**
     * The records' select ({@link RecordRows#SELECT}'s columns) with the scores of one scoring:
     * {@code scoring} ({@code > 0}) of the record's run, or, for 0, the latest of each record's run.
     * A record of a run with no such scoring, or without a score in it, reads unscored.
     */
    static String selectRecords(int scoring) {
        return selectRecords(scoring, true);
    }

    /** As {@link #selectRecords(int)}; without the records' texts unless {@code texts} ({@link RecordRows#SELECT_FIGURES}). */
    static String selectRecords(int scoring, boolean texts) {
        String which = scoring > 0 ? Integer.toString(scoring)
                : "(SELECT MAX(g.number) FROM panoptes_scorings g WHERE g.run_id = COALESCE(r.run_id, ''))";
        return (texts ? RecordRows.SELECT : RecordRows.SELECT_FIGURES) + " LEFT JOIN panoptes_scores s ON s.job_id = r.job_id AND s.vignette_id = "
                + "r.vignette_id AND s.scoring = " + which;
    }

    /** The scorings of a run, oldest first; empty when it has none. */
    static List<Scoring> scorings(Connection c, String runId) throws SQLException {
        return RunTables.rowsOfRun(c, "SELECT number, scorer, created_at, origin FROM panoptes_scorings WHERE run_id = ? "
                + "ORDER BY number", runId,
                rs -> new Scoring(rs.getInt(1), rs.getString(2), Instant.ofEpochMilli(rs.getLong(3)), rs.getString(4)));
    }

    /** The latest scoring of a run, or null when it has none. */
    static Scoring latest(Connection c, String runId) throws SQLException {
        List<Scoring> all = scorings(c, runId);
        return all.isEmpty() ? null : all.get(all.size() - 1);
    }

    /** Adds the next scoring of a run (number one above its latest) and returns it. */
    static Scoring create(Connection c, String runId, String scorer, String origin, Instant now)
            throws SQLException {
        Scoring latest = latest(c, runId);
        Scoring made = new Scoring(latest == null ? 1 : latest.number() + 1, scorer, now, origin);
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO panoptes_scorings (run_id, number, scorer, "
                + "created_at, origin) VALUES (?, ?, ?, ?, ?)")) {
            insert.setString(1, runId);
            insert.setInt(2, made.number());
            insert.setString(3, made.scorer());
            insert.setLong(4, made.createdAt().toEpochMilli());
            insert.setString(5, made.origin());
            insert.executeUpdate();
        }
        return made;
    }

    /** Scores each record into {@code scoring} with what {@code scorer} gives it (null: no score). */
    static void insertAll(Connection c, int scoring, List<StoredRecord> records,
                          Function<StoredRecord, ScoreEntry> scorer) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement(INSERT_SCORE)) {
            int batched = 0;
            for (StoredRecord r : records) {
                ScoreEntry e = scorer.apply(r);
                if (e == null) {
                    continue;
                }
                setKey(insert, r.jobId().value(), r.record().vignetteId(), scoring);
                setScore(insert, 4, e);
                insert.addBatch();
                batched++;
            }
            if (batched > 0) {
                insert.executeBatch();
            }
        }
    }

    /**
     * Sets a grade on an answer of a scoring that waits for one (no score, and no reason for having
     * none): the first verdict stands, readable or not. @return true when it did
     */
    static boolean grade(Connection c, JobId jobId, String vignetteId, int scoring, ScoreEntry grade)
            throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE panoptes_scores SET scorer = ?, score = ?, "
                + "explanation = ? WHERE job_id = ? AND vignette_id = ? AND scoring = ? AND score IS NULL "
                + "AND explanation IS NULL")) {
            setScore(update, 1, grade);
            update.setString(4, jobId.value());
            update.setString(5, vignetteId);
            update.setInt(6, scoring);
            return update.executeUpdate() == 1;
        }
    }

    /** The score of a stored answer in a scoring (null when it has none, or is not there). */
    static ScoreEntry score(Connection c, JobId jobId, String vignetteId, int scoring) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT scorer, score, explanation FROM panoptes_scores "
                + "WHERE job_id = ? AND vignette_id = ? AND scoring = ?")) {
            setKey(q, jobId.value(), vignetteId, scoring);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                double score = rs.getDouble(2);
                Double scoreOrNull = rs.wasNull() ? null : score;
                return new ScoreEntry(rs.getString(1), scoreOrNull, rs.getString(3));
            }
        }
    }

    /** The latest scoring number of the run of a stored answer; 0 when it or its run's scorings are missing. */
    static int latestOfRecord(Connection c, JobId jobId, String vignetteId) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT MAX(g.number) FROM panoptes_records r JOIN "
                + "panoptes_scorings g ON g.run_id = COALESCE(r.run_id, '') WHERE r.job_id = ? AND r.vignette_id = ?")) {
            q.setString(1, jobId.value());
            q.setString(2, vignetteId);
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    /** Parameters 1 to 3: job, vignette, scoring. */
    static void setKey(PreparedStatement ps, String jobId, String vignetteId, int scoring) throws SQLException {
        ps.setString(1, jobId);
        ps.setString(2, vignetteId);
        ps.setInt(3, scoring);
    }

    /** Parameters {@code from} to {@code from + 2}: scorer, score, explanation. */
    static void setScore(PreparedStatement ps, int from, ScoreEntry e) throws SQLException {
        ps.setString(from, e.scorer());
        RecordRows.setDouble(ps, from + 1, e.score());
        ps.setString(from + 2, e.explanation());
    }

    /**
     * Version 2 to 3: the scores version 2 kept in the records become scoring 1 of each run, made
     * when the run started (or its first record was stored), under the scorer its records name
     * when they all name one (a v2 rescore rewrote them), else the run's.
     */
    static void migrateRecordScores(Statement s) throws SQLException {
        s.execute("INSERT INTO panoptes_scorings (run_id, number, scorer, created_at, origin) "
                + "SELECT r.run_id, 1, COALESCE(CASE WHEN COUNT(DISTINCT r.scorer) = 1 THEN MIN(r.scorer) END, "
                + "MIN(u.scorer), MIN(r.scorer)), COALESCE(MIN(u.started_at), MIN(r.stored_at)), '"
                + Scoring.RUN + "' FROM panoptes_records r LEFT JOIN panoptes_runs u ON u.run_id = r.run_id "
                + "WHERE r.scorer IS NOT NULL AND r.run_id IS NOT NULL GROUP BY r.run_id");
        s.execute("INSERT INTO panoptes_scores (job_id, vignette_id, scoring, scorer, score, explanation) "
                + "SELECT job_id, vignette_id, 1, scorer, score, explanation FROM panoptes_records "
                + "WHERE scorer IS NOT NULL AND run_id IS NOT NULL");
    }
}
