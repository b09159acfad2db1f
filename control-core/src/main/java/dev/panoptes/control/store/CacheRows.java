package dev.panoptes.control.store;

import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SQL of the response cache on {@code panoptes_records}: the newest answer a model gave for
 * each request key, and the vignettes a run has stored per job. Each method works in the
 * connection's current transaction; the {@link JdbcResultStore} that owns the connection commits.
 */
final class CacheRows {
    /** Keys per query: well under SQLite's oldest limit of 999 parameters. */
    static final int KEYS_PER_QUERY = 500;

    private CacheRows() {
    }

    /**
     * Adds to {@code found} the newest successful answer a model gave (not a cached copy) for each
     * of {@code keys} (at most {@link #KEYS_PER_QUERY}) stored at or after {@code notBefore}, found
     * through {@code requestKeys} (on SQLite, among the records keyed so far: key them first).
     */
    static void newest(Connection c, RequestKeyIndex requestKeys, List<String> keys, long notBefore,
                       Map<String, CachedAnswer> found) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT r.request_key, r.run_id, r.response, r.model, "
                + "r.finish_reason, r.prompt_tokens, r.completion_tokens, r.stored_at, r.vignette_id FROM "
                + requestKeys.lookupFrom() + " WHERE r.error IS NULL AND r.cached_from IS NULL AND r.run_id IS NOT NULL"
                + " AND r.stored_at >= ? AND " + requestKeys.lookupKey() + " IN (");
        for (int i = 0; i < keys.size(); i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(") ORDER BY r.stored_at DESC, r.job_id, r.vignette_id");
        try (PreparedStatement q = c.prepareStatement(sql.toString())) {
            q.setLong(1, notBefore);
            for (int i = 0; i < keys.size(); i++) {
                q.setString(i + 2, keys.get(i));
            }
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    String key = rs.getString(1);
                    if (found.containsKey(key)) {
                        continue;
                    }
                    Long prompt = RecordRows.getLong(rs, 6);
                    Long completion = RecordRows.getLong(rs, 7);
                    Usage usage = prompt == null && completion == null ? null
                            : new Usage(prompt == null ? 0 : prompt, completion == null ? 0 : completion);
                    ResponseRecord answer = new ResponseRecord(rs.getString(9), rs.getString(3), rs.getString(4),
                            rs.getString(5), null, usage);
                    found.put(key, new CachedAnswer(key, answer, rs.getString(2), Instant.ofEpochMilli(rs.getLong(8))));
                }
            }
        }
    }

    /** The vignette ids stored for each job of a run, by job id. */
    static Map<String, Set<String>> storedByJob(Connection c, String runId) throws SQLException {
        Map<String, Set<String>> stored = new HashMap<>();
        try (PreparedStatement q = c.prepareStatement(
                "SELECT job_id, vignette_id FROM panoptes_records WHERE run_id = ?")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    stored.computeIfAbsent(rs.getString(1), k -> new HashSet<>()).add(rs.getString(2));
                }
            }
        }
        return stored;
    }
}
