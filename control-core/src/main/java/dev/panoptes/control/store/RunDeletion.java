package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * What {@link JdbcResultStore#deleteRun} removed of one run: its answers, their scores in every
 * scoring, the scorings, the jobs that failed for good, the per-worker events and the run's own
 * entry (with its manifest); its sittings, what stopped them and what they spent on answers never
 * stored go too, uncounted. All zero when the store held nothing of the run, as after a second
 * delete: deleting is idempotent.
 *
 * <p>The SQL lives here too ({@link #delete}): one statement per table, in the caller's
 * transaction, scores before the answers they are found through. Immutable; any thread.
 *
 * @param runId        the run
 * @param records      answers removed
 * @param scores       scores removed, over every scoring of the run
 * @param scorings     scorings removed
 * @param failures     failed jobs removed
 * @param workerEvents per-worker event rows removed
 * @param noted        true when the run's entry (its manifest) was there and is removed
 */
public record RunDeletion(String runId, long records, long scores, long scorings, long failures, long workerEvents,
                          boolean noted) {
    /** True when the store held nothing of the run. */
    public boolean nothing() {
        return records == 0 && scores == 0 && scorings == 0 && failures == 0 && workerEvents == 0 && !noted;
    }

    /**
     * Removes everything stored for {@code runId}, the key entries of its answers included
     * ({@link RequestKeyIndex#forget}), in the connection's current transaction (the caller commits).
     */
    static RunDeletion delete(Connection c, RequestKeyIndex requestKeys, String runId) throws SQLException {
        long scores = update(c, "DELETE FROM panoptes_scores WHERE job_id IN "
                + "(SELECT job_id FROM panoptes_records WHERE run_id = ?)", runId);
        requestKeys.forget(c, "run_id = ?", runId);
        long records = update(c, "DELETE FROM panoptes_records WHERE run_id = ?", runId);
        requestKeys.settle(c);
        long scorings = update(c, "DELETE FROM panoptes_scorings WHERE run_id = ?", runId);
        long failures = update(c, "DELETE FROM panoptes_failures WHERE run_id = ?", runId);
        long events = update(c, "DELETE FROM panoptes_worker_events WHERE run_id = ?", runId);
        update(c, "DELETE FROM panoptes_sittings WHERE run_id = ?", runId);
        update(c, "DELETE FROM panoptes_stops WHERE run_id = ?", runId);
        update(c, "DELETE FROM panoptes_unstored WHERE run_id = ?", runId);
        long runs = update(c, "DELETE FROM panoptes_runs WHERE run_id = ?", runId);
        return new RunDeletion(runId, records, scores, scorings, failures, events, runs > 0);
    }

    private static long update(Connection c, String sql, String runId) throws SQLException {
        try (PreparedStatement delete = c.prepareStatement(sql)) {
            delete.setString(1, runId);
            return delete.executeUpdate();
        }
    }
}
