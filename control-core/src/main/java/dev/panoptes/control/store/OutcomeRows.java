package dev.panoptes.control.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.RequestKey;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The SQL of what a job's delivery leaves: its answers in {@code panoptes_records} (without
 * their scores, which {@link ScoreTables} keeps) and, for a job that failed for good, its row in
 * {@code panoptes_failures}. Each method works in the connection's current transaction; the
 * {@link JdbcResultStore} that owns the connection commits, rolls back and names failures.
 */
final class OutcomeRows {
    /** Stores one answer unless it is there; parameters as {@link #bindRecord} sets them. */
    static final String INSERT_RECORD = "INSERT INTO panoptes_records (job_id, vignette_id, response, model, "
            + "finish_reason, latency_ms, prompt_tokens, completion_tokens, worker_id, stored_at, run_id, run_model, "
            + "epoch, prompt, expected, metadata, error, request_key, cached_from, transcript) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, vignette_id) DO NOTHING";
    /**
     * {@link #INSERT_RECORD} without the five columns that most answers leave null (metadata,
     * error, request key, cached-from run, transcript): a batch whose every row leaves them null
     * binds 15 parameters a row instead of 20, and on SQLite each bind is a call into the native
     * library (the columns left out take their default, null). Parameters as
     * {@link #bindLeanRecord} sets them.
     */
    static final String INSERT_LEAN_RECORD = "INSERT INTO panoptes_records (job_id, vignette_id, response, model, "
            + "finish_reason, latency_ms, prompt_tokens, completion_tokens, worker_id, stored_at, run_id, run_model, "
            + "epoch, prompt, expected) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            + "ON CONFLICT (job_id, vignette_id) DO NOTHING";
    static final String CLEAR_FAILURE = "DELETE FROM panoptes_failures WHERE job_id = ?";
    /**
     * Whether any failure is recorded at all: when none is, a batch's answers have no failure to
     * clear, and the store skips {@link #CLEAR_FAILURE}'s one statement per answer.
     */
    static final String ANY_FAILURE = "SELECT 1 FROM panoptes_failures LIMIT 1";
    private static final String UPSERT_FAILURE = "INSERT INTO panoptes_failures (job_id, reason, attempts, failed_at, "
            + "run_id, run_model) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET reason = excluded.reason, "
            + "attempts = excluded.attempts, failed_at = excluded.failed_at, "
            + "run_id = COALESCE(excluded.run_id, panoptes_failures.run_id), "
            + "run_model = COALESCE(excluded.run_model, panoptes_failures.run_model)";
    private static final ObjectMapper JSON = new ObjectMapper();

    private OutcomeRows() {
    }

    /**
     * Sets the parameters of {@link #INSERT_RECORD} for one answer.
     *
     * @param job        the job it answers, or null when stored without one (no context then)
     * @param v          the vignette it answers, or null when unknown
     * @param cachedFrom the run whose answer this copies (served from the cache), or null when a
     *                   model gave it
     */
    static void bindRecord(PreparedStatement insert, String jobId, ResponseRecord r, String workerId, long now,
                           Job job, Vignette v, String cachedFrom) throws SQLException {
        bindCommon(insert, jobId, r, workerId, now, job, v);
        insert.setString(16, v == null || v.metadata().isEmpty() ? null : metadataJson(v));
        insert.setString(17, r.error());
        insert.setString(18, job == null || v == null ? null : RequestKey.stored(job, v));
        insert.setString(19, cachedFrom);
        insert.setString(20, r.transcript());
    }

    /**
     * True when {@link #bindLeanRecord} can store this answer: it leaves null every column
     * {@link #INSERT_LEAN_RECORD} leaves out (no vignette metadata, error, request key, cached-from
     * run or transcript).
     *
     * @param cachedFrom the run whose answer this copies, or null when a model gave it
     */
    static boolean lean(ResponseRecord r, Job job, Vignette v, String cachedFrom) {
        return cachedFrom == null && r.error() == null && r.transcript() == null
                && (v == null || v.metadata().isEmpty() && (job == null || RequestKey.stored(job, v) == null));
    }

    /**
     * Sets the parameters of {@link #INSERT_LEAN_RECORD} for one answer of which {@link #lean} is
     * true: those of {@link #bindRecord} less the five it leaves null.
     */
    static void bindLeanRecord(PreparedStatement insert, String jobId, ResponseRecord r, String workerId, long now,
                               Job job, Vignette v) throws SQLException {
        bindCommon(insert, jobId, r, workerId, now, job, v);
    }

    /** Parameters 1 to 15 of {@link #INSERT_RECORD} and {@link #INSERT_LEAN_RECORD} alike. */
    private static void bindCommon(PreparedStatement insert, String jobId, ResponseRecord r, String workerId,
                                   long now, Job job, Vignette v) throws SQLException {
        insert.setString(1, jobId);
        insert.setString(2, r.vignetteId());
        insert.setString(3, r.response());
        insert.setString(4, r.model());
        insert.setString(5, r.finishReason());
        RecordRows.setLong(insert, 6, r.latencyMs());
        RecordRows.setLong(insert, 7, r.usage() == null ? null : r.usage().promptTokens());
        RecordRows.setLong(insert, 8, r.usage() == null ? null : r.usage().completionTokens());
        insert.setString(9, workerId);
        insert.setLong(10, now);
        insert.setString(11, job == null ? null : job.runId());
        insert.setString(12, job == null ? null : job.model());
        insert.setInt(13, job == null ? 0 : job.epoch());
        insert.setString(14, v == null ? null : v.displayPrompt());
        insert.setString(15, v == null ? null : v.expected());
    }

    /** Who stored a vignette's record and when, or null when it is not stored. */
    static Stamp stamp(Connection c, String jobId, String vignetteId) throws SQLException {
        try (PreparedStatement q = c.prepareStatement(
                "SELECT worker_id, stored_at FROM panoptes_records WHERE job_id = ? AND vignette_id = ?")) {
            q.setString(1, jobId);
            q.setString(2, vignetteId);
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? new Stamp(rs.getString(1), rs.getLong(2)) : null;
            }
        }
    }

    /** Job ids asked about in one query of {@link #stamps}: well under every database's limit of parameters. */
    private static final int STAMPS_PER_QUERY = 256;

    /**
     * Who stored each record of these jobs and when, by job id, NUL, vignette id: a few queries
     * by primary key, whatever the number of records.
     */
    static Map<String, Stamp> stamps(Connection c, Collection<String> jobIds) throws SQLException {
        Map<String, Stamp> stamps = new HashMap<>();
        List<String> ids = new ArrayList<>(jobIds);
        for (int from = 0; from < ids.size(); from += STAMPS_PER_QUERY) {
            List<String> chunk = ids.subList(from, Math.min(ids.size(), from + STAMPS_PER_QUERY));
            String sql = "SELECT job_id, vignette_id, worker_id, stored_at FROM panoptes_records WHERE job_id IN ("
                    + String.join(", ", java.util.Collections.nCopies(chunk.size(), "?")) + ")";
            try (PreparedStatement q = c.prepareStatement(sql)) {
                for (int i = 0; i < chunk.size(); i++) {
                    q.setString(i + 1, chunk.get(i));
                }
                try (ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        stamps.put(rs.getString(1) + '\u0000' + rs.getString(2),
                                new Stamp(rs.getString(3), rs.getLong(4)));
                    }
                }
            }
        }
        return stamps;
    }

    /** Who stored a record and when: what tells one write's rows from another's. */
    record Stamp(String workerId, long storedAt) {
    }

    /**
     * The records sorted by vignette id: two stores writing the same job on PostgreSQL then lock
     * its rows in the same order, and so wait for each other instead of deadlocking. The list
     * itself when it is in that order already (one record, say), as it is not changed.
     */
    static List<ResponseRecord> inKeyOrder(List<ResponseRecord> records) {
        for (int i = 1; i < records.size(); i++) {
            if (KEY_ORDER.compare(records.get(i - 1), records.get(i)) > 0) {
                List<ResponseRecord> sorted = new ArrayList<>(records);
                sorted.sort(KEY_ORDER);
                return sorted;
            }
        }
        return records;
    }

    private static final Comparator<ResponseRecord> KEY_ORDER =
            Comparator.comparing(ResponseRecord::vignetteId, Comparator.nullsFirst(Comparator.naturalOrder()));

    static Map<String, Vignette> vignettesById(Job job) {
        Map<String, Vignette> byId = new HashMap<>();
        for (Vignette v : job.spec().vignettes()) {
            byId.put(v.id(), v);
        }
        return byId;
    }

    /**
     * The vignette of the job each record answers, in the records' order; null where the record
     * answers none of them, and all null without a job. A job's records mostly come in the order
     * of its vignettes, so each is looked for at its own position first; a map of the job's
     * vignettes is made only for a record not found there.
     */
    static Vignette[] vignettesOf(Job job, List<ResponseRecord> records) {
        Vignette[] found = new Vignette[records.size()];
        if (job == null) {
            return found;
        }
        List<Vignette> vignettes = job.spec().vignettes();
        Map<String, Vignette> byId = null;
        for (int i = 0; i < found.length; i++) {
            String id = records.get(i).vignetteId();
            if (i < vignettes.size() && vignettes.get(i).id().equals(id)) {
                found[i] = vignettes.get(i);
            } else {
                if (byId == null) {
                    byId = vignettesById(job);
                }
                found[i] = byId.get(id);
            }
        }
        return found;
    }

    /**
     * @throws java.sql.SQLDataException (SQLSTATE 22000, a data exception) when the metadata is not
     *         JSON: the data's fault, as a value the database cannot hold
     */
    private static String metadataJson(Vignette v) throws SQLException {
        try {
            return JSON.writeValueAsString(v.metadata());
        } catch (JsonProcessingException e) {
            throw new java.sql.SQLDataException("vignette '" + v.id() + "' has metadata that is not JSON: "
                    + e.getOriginalMessage(), "22000", e);
        }
    }

    /** Records (or replaces) a job's failure for good. */
    static void upsertFailure(Connection c, JobId jobId, String reason, int attempts, long now, String runId,
                              String model) throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement(UPSERT_FAILURE)) {
            upsert.setString(1, jobId.value());
            upsert.setString(2, reason);
            upsert.setInt(3, attempts);
            upsert.setLong(4, now);
            upsert.setString(5, runId);
            upsert.setString(6, model);
            upsert.executeUpdate();
        }
    }

    /** Every failure, by job id. */
    static void failures(Connection c, Consumer<JobFailure> action) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, reason, attempts, failed_at, run_id, run_model "
                     + "FROM panoptes_failures ORDER BY job_id")) {
            while (rs.next()) {
                action.accept(new JobFailure(JobId.of(rs.getString(1)), rs.getString(2), rs.getInt(3),
                        Instant.ofEpochMilli(rs.getLong(4)), rs.getString(5), rs.getString(6)));
            }
        }
    }

    /** The vignette ids stored for a job. */
    static Set<String> storedVignetteIds(Connection c, JobId jobId) throws SQLException {
        Set<String> ids = new HashSet<>();
        try (PreparedStatement q = c.prepareStatement("SELECT vignette_id FROM panoptes_records WHERE job_id = ?")) {
            q.setString(1, jobId.value());
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
        }
        return ids;
    }

    /** The number of records of each job that has any. */
    static Map<String, Integer> countsByJob(Connection c) throws SQLException {
        Map<String, Integer> counts = new HashMap<>();
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, COUNT(*) FROM panoptes_records GROUP BY job_id")) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getInt(2));
            }
        }
        return counts;
    }
}
