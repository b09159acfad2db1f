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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The SQL of the tables that describe runs rather than answers: {@code panoptes_runs},
 * {@code panoptes_sittings}, {@code panoptes_stops}, {@code panoptes_unstored} and
 * {@code panoptes_worker_events}. Each method works in the connection's current transaction; the
 * {@link JdbcResultStore} that owns the connection commits, rolls back and names failures.
 */
final class RunTables {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunTables() {
    }

    /**
     * Notes a run, replacing what was noted of it but its first start (a run started again is not
     * finished yet), and opens a new sitting of it starting at {@code run.startedAt()}.
     */
    static void upsertRun(Connection c, RunEntry run) throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement("INSERT INTO panoptes_runs (run_id, suite, models, scorer, "
                + "epochs, vignettes, started_at, manifest, tool_version, suite_sha256, finished_at) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                + "suite = excluded.suite, models = excluded.models, scorer = excluded.scorer, "
                + "epochs = excluded.epochs, vignettes = excluded.vignettes, "
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
        // The first start stays (ON CONFLICT leaves started_at); each start is a sitting of its own.
        try (PreparedStatement sitting = c.prepareStatement("INSERT INTO panoptes_sittings (run_id, number, "
                + "started_at) SELECT ?, COALESCE(MAX(number), 0) + 1, ? FROM panoptes_sittings WHERE run_id = ?")) {
            sitting.setString(1, run.runId());
            sitting.setLong(2, run.startedAt().toEpochMilli());
            sitting.setString(3, run.runId());
            sitting.executeUpdate();
        }
    }

    /**
     * Notes the end of the run's last sitting, if it is open: now, with the answers stored since
     * it started, and keeps {@code unstored} with the run's last sitting ({@link #keepUnstored}):
     * the one ending now, or, when it was ended already, still the sitting of the coordinator that
     * spent it. A run without sittings keeps none. @return false when the run has no open sitting
     */
    static boolean endSitting(Connection c, String runId, Instant endedAt, List<UnstoredSpend> unstored)
            throws SQLException {
        boolean ended = endSitting(c, runId, endedAt);
        if (!unstored.isEmpty()) {
            Long last = lastSitting(c, runId);
            if (last != null) {
                keepUnstored(c, runId, last, unstored);
            }
        }
        return ended;
    }

    /**
     * Keeps what sitting {@code sitting} of the run spent on answers never stored, per model: a
     * model's row is replaced by the one given (the coordinator's figures grow over the sitting,
     * so noting them twice must not count them twice); models not given keep theirs, and an entry
     * of nothing writes nothing.
     */
    static void keepUnstored(Connection c, String runId, long sitting, List<UnstoredSpend> unstored)
            throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement("INSERT INTO panoptes_unstored (run_id, sitting, model, "
                + "attempts, prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?, ?) "
                + "ON CONFLICT (run_id, sitting, model) DO UPDATE SET attempts = excluded.attempts, "
                + "prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens")) {
            for (UnstoredSpend u : UnstoredSpend.sum(unstored)) {
                if (u.isZero()) {
                    continue;
                }
                upsert.setString(1, runId);
                upsert.setLong(2, sitting);
                upsert.setString(3, u.model());
                upsert.setLong(4, u.attempts());
                upsert.setLong(5, u.promptTokens());
                upsert.setLong(6, u.completionTokens());
                upsert.executeUpdate();
            }
        }
    }

    /** What the run's sittings spent on answers never stored, per model over all of them, by model. */
    static List<UnstoredSpend> unstored(Connection c, String runId) throws SQLException {
        return rowsOfRun(c, "SELECT model, SUM(attempts), SUM(prompt_tokens), SUM(completion_tokens) FROM "
                + "panoptes_unstored WHERE run_id = ? GROUP BY model ORDER BY model", runId,
                rs -> new UnstoredSpend(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)));
    }

    /** Each sitting's spend on answers never stored, by sitting number, each sitting's by model. */
    private static Map<Long, List<UnstoredSpend>> unstoredBySitting(Connection c, String runId) throws SQLException {
        Map<Long, List<UnstoredSpend>> bySitting = new HashMap<>();
        try (PreparedStatement q = c.prepareStatement("SELECT sitting, model, attempts, prompt_tokens, "
                + "completion_tokens FROM panoptes_unstored WHERE run_id = ? ORDER BY sitting, model")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    bySitting.computeIfAbsent(rs.getLong(1), n -> new ArrayList<>()).add(new UnstoredSpend(
                            rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
                }
            }
        }
        return bySitting;
    }

    /** The number of the run's last sitting, or null when it has none. */
    private static Long lastSitting(Connection c, String runId) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT MAX(number) FROM panoptes_sittings WHERE run_id = ?")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                if (rs.next()) {
                    long n = rs.getLong(1);
                    return rs.wasNull() ? null : n;
                }
                return null;
            }
        }
    }

    /**
     * Notes the end of the run's last sitting, if it is open: now, with the answers stored since
     * it started. @return false when the run has no open sitting
     */
    static boolean endSitting(Connection c, String runId, Instant endedAt) throws SQLException {
        Long number = null;
        long started = 0;
        try (PreparedStatement q = c.prepareStatement("SELECT number, started_at FROM panoptes_sittings "
                + "WHERE run_id = ? AND ended_at IS NULL ORDER BY number DESC")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                if (rs.next()) {
                    number = rs.getLong(1);
                    started = rs.getLong(2);
                }
            }
        }
        if (number == null) {
            return false;
        }
        long answers = storedBetween(c, runId, started, Long.MAX_VALUE)[0];
        try (PreparedStatement update = c.prepareStatement("UPDATE panoptes_sittings SET ended_at = ?, answers = ? "
                + "WHERE run_id = ? AND number = ?")) {
            update.setLong(1, Math.max(started, endedAt.toEpochMilli()));
            update.setLong(2, answers);
            update.setString(3, runId);
            update.setLong(4, number);
            update.executeUpdate();
        }
        return true;
    }

    /**
     * Notes what stopped the run's last sitting (replacing what was noted of it).
     *
     * @return false when the run has no sitting
     */
    static boolean stopSitting(Connection c, String runId, RunStop stop) throws SQLException {
        Long number = lastSitting(c, runId);
        if (number == null) {
            return false;
        }
        try (PreparedStatement delete = c.prepareStatement("DELETE FROM panoptes_stops WHERE run_id = ? "
                + "AND sitting = ?")) {
            delete.setString(1, runId);
            delete.setLong(2, number);
            delete.executeUpdate();
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO panoptes_stops (run_id, sitting, cause, "
                + "reason) VALUES (?, ?, ?, ?)")) {
            insert.setString(1, runId);
            insert.setLong(2, number);
            insert.setString(3, stop.cause());
            insert.setString(4, stop.reason());
            insert.executeUpdate();
        }
        return true;
    }

    /**
     * A run's sittings, first first. A sitting whose end was never noted (its coordinator killed,
     * or running now) ends at the last answer stored before the next sitting started.
     */
    static List<RunSitting> sittings(Connection c, String runId) throws SQLException {
        List<long[]> rows = new ArrayList<>();
        List<RunStop> stops = new ArrayList<>();
        try (PreparedStatement q = c.prepareStatement("SELECT s.number, s.started_at, s.ended_at, s.answers, "
                + "t.cause, t.reason FROM panoptes_sittings s LEFT JOIN panoptes_stops t "
                + "ON t.run_id = s.run_id AND t.sitting = s.number WHERE s.run_id = ? ORDER BY s.number")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    Long ended = RecordRows.getLong(rs, 3);
                    Long answers = RecordRows.getLong(rs, 4);
                    rows.add(new long[] {rs.getLong(1), rs.getLong(2), ended == null ? -1 : ended,
                            answers == null ? -1 : answers});
                    String cause = rs.getString(5);
                    stops.add(cause == null ? null : new RunStop(cause, rs.getString(6)));
                }
            }
        }
        Map<Long, List<UnstoredSpend>> unstored = rows.isEmpty() ? Map.of() : unstoredBySitting(c, runId);
        List<RunSitting> sittings = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            long[] r = rows.get(i);
            List<UnstoredSpend> spent = unstored.getOrDefault(r[0], List.of());
            if (r[2] >= 0) {
                sittings.add(new RunSitting((int) r[0], Instant.ofEpochMilli(r[1]), Instant.ofEpochMilli(r[2]),
                        Math.max(0, r[3]), true, stops.get(i), spent));
            } else {
                long until = i + 1 < rows.size() ? rows.get(i + 1)[1] : Long.MAX_VALUE;
                long[] stored = storedBetween(c, runId, r[1], until);
                sittings.add(new RunSitting((int) r[0], Instant.ofEpochMilli(r[1]),
                        Instant.ofEpochMilli(Math.max(r[1], stored[1])), stored[0], false, stops.get(i), spent));
            }
        }
        return sittings;
    }

    /** {count, last stored_at} of the run's answers stored in [from, until). */
    private static long[] storedBetween(Connection c, String runId, long from, long until) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT COUNT(*), MAX(stored_at) FROM panoptes_records "
                + "WHERE run_id = ? AND stored_at >= ? AND stored_at < ?")) {
            q.setString(1, runId);
            q.setLong(2, from);
            q.setLong(3, until);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                long count = rs.getLong(1);
                long last = rs.getLong(2);
                return new long[] {count, rs.wasNull() ? from : last};
            }
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
        List<RunEntry> withSittings = new ArrayList<>(runs.size());
        for (RunEntry r : runs) {
            withSittings.add(new RunEntry(r.runId(), r.suite(), r.models(), r.scorer(), r.epochs(), r.vignettes(),
                    r.startedAt(), r.manifest(), r.finishedAt(), sittings(c, r.runId())));
        }
        return withSittings;
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
        return rowsOfRun(c, "SELECT worker_id, failures, quarantines FROM panoptes_worker_events WHERE run_id = ? "
                + "ORDER BY worker_id", runId, rs -> new WorkerEventCount(rs.getString(1), rs.getLong(2), rs.getLong(3)));
    }

    /** One row of a query's result. */
    interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Each row of {@code sql}, whose only parameter is the run id, as {@code row} reads it, in the query's order. */
    static <T> List<T> rowsOfRun(Connection c, String sql, String runId, RowReader<T> row) throws SQLException {
        List<T> rows = new ArrayList<>();
        try (PreparedStatement q = c.prepareStatement(sql)) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    rows.add(row.read(rs));
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
