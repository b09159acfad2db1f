package dev.panoptes.control.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.suite.RunManifest;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The SQL of the tables that describe runs rather than answers: {@code panoptes_runs} and
 * {@code panoptes_worker_events}. Each method works in the connection's current transaction; the
 * {@link JdbcResultStore} that owns the connection commits, rolls back and names failures.
 */
final class RunTables {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunTables() {
    }

    /** Notes a run, replacing what was noted of it (a run started again is not finished yet). */
    static void upsertRun(Connection c, RunEntry run) throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement("INSERT INTO panoptes_runs (run_id, suite, models, scorer, "
                + "epochs, vignettes, started_at, manifest, tool_version, suite_sha256, finished_at) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                + "suite = excluded.suite, models = excluded.models, scorer = excluded.scorer, "
                + "epochs = excluded.epochs, vignettes = excluded.vignettes, started_at = excluded.started_at, "
                + "manifest = excluded.manifest, tool_version = excluded.tool_version, "
                + "suite_sha256 = excluded.suite_sha256, finished_at = excluded.finished_at")) {
            upsert.setString(1, run.runId());
            upsert.setString(2, run.suite());
            upsert.setString(3, json(run.models()));
            upsert.setString(4, run.scorer());
            upsert.setInt(5, run.epochs());
            upsert.setInt(6, run.vignettes());
            upsert.setLong(7, run.startedAt().toEpochMilli());
            RunManifest m = run.manifest();
            upsert.setString(8, m == null ? null : m.toJson());
            upsert.setString(9, m == null ? null : m.toolVersion());
            upsert.setString(10, m == null ? null : m.suiteSha256());
            RecordRows.setLong(upsert, 11, run.finishedAt() == null ? null : run.finishedAt().toEpochMilli());
            upsert.executeUpdate();
        }
    }

    /** Notes when a run ended with its summary. @return false when no such run is noted */
    static boolean finishRun(Connection c, String runId, Instant finishedAt) throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE panoptes_runs SET finished_at = ? "
                + "WHERE run_id = ?")) {
            update.setLong(1, finishedAt.toEpochMilli());
            update.setString(2, runId);
            return update.executeUpdate() == 1;
        }
    }

    static List<RunEntry> runs(Connection c) throws SQLException {
        List<RunEntry> runs = new ArrayList<>();
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT run_id, suite, models, scorer, epochs, vignettes, started_at, "
                     + "manifest, finished_at FROM panoptes_runs ORDER BY started_at DESC, run_id")) {
            while (rs.next()) {
                Long finished = RecordRows.getLong(rs, 9);
                runs.add(new RunEntry(rs.getString(1), rs.getString(2), models(rs.getString(1), rs.getString(3)),
                        rs.getString(4), rs.getInt(5), rs.getInt(6), Instant.ofEpochMilli(rs.getLong(7)),
                        manifest(rs.getString(1), rs.getString(8)),
                        finished == null ? null : Instant.ofEpochMilli(finished)));
            }
        }
        return runs;
    }

    static void addWorkerEvents(Connection c, String runId, String workerId, long failures, long quarantines)
            throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement("INSERT INTO panoptes_worker_events (run_id, worker_id, "
                + "failures, quarantines) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, worker_id) DO UPDATE SET "
                + "failures = panoptes_worker_events.failures + excluded.failures, "
                + "quarantines = panoptes_worker_events.quarantines + excluded.quarantines")) {
            upsert.setString(1, runId);
            upsert.setString(2, workerId);
            upsert.setLong(3, failures);
            upsert.setLong(4, quarantines);
            upsert.executeUpdate();
        }
    }

    static List<WorkerEventCount> workerEvents(Connection c, String runId) throws SQLException {
        List<WorkerEventCount> rows = new ArrayList<>();
        try (PreparedStatement q = c.prepareStatement("SELECT worker_id, failures, quarantines FROM "
                + "panoptes_worker_events WHERE run_id = ? ORDER BY worker_id")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    rows.add(new WorkerEventCount(rs.getString(1), rs.getLong(2), rs.getLong(3)));
                }
            }
        }
        return rows;
    }

    private static String json(List<String> models) throws SQLException {
        try {
            return JSON.writeValueAsString(models);
        } catch (JsonProcessingException e) {
            throw new SQLException("a list of model names cannot be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static RunManifest manifest(String runId, String json) throws SQLException {
        if (json == null) {
            return null;
        }
        try {
            return RunManifest.fromJson(json);
        } catch (IllegalArgumentException e) {
            throw new SQLException("run " + runId + " has a manifest that cannot be read: " + e.getMessage(), e);
        }
    }

    private static List<String> models(String runId, String json) throws SQLException {
        try {
            return Arrays.asList(JSON.readValue(json, String[].class));
        } catch (JsonProcessingException e) {
            throw new SQLException("run " + runId + " has a models list that is not a JSON array of strings: "
                    + e.getOriginalMessage(), e);
        }
    }
}
