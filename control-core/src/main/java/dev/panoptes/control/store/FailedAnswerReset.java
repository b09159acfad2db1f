package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link JdbcResultStore#resetFailedAnswers} removed of one run so that its failed answers
 * are asked again ({@code --retry-failed}): each failed answer (a record whose model API gave no
 * answer, {@link dev.panoptes.control.ResponseRecord#isFailed()}) and its scores in every scoring.
 * The vignette is then missing from its job, as if never asked, and the run's next answer for it
 * is stored in its place: a (vignette, epoch) of a run is never stored twice, and the failure is
 * replaced rather than kept beside the new answer (the caller prints what is removed, so the old
 * error is on the console).
 *
 * <p>The SQL lives here too ({@link #reset}): in the caller's transaction, scores before the
 * answers they are found through. Immutable; any thread.
 *
 * @param runId   the run
 * @param answers the failed answers removed, in job and vignette order
 * @param scores  their scores removed, over every scoring of the run
 */
public record FailedAnswerReset(String runId, List<Removed> answers, long scores) {
    /** Copies the list. */
    public FailedAnswerReset {
        answers = List.copyOf(answers);
    }

    /**
     * One failed answer removed.
     *
     * @param jobId      its job
     * @param vignetteId its vignette
     * @param model      the model the run asked, or null when the record kept none
     * @param epoch      its epoch, or null when the record kept none
     * @param error      why the model API gave no answer
     */
    public record Removed(String jobId, String vignetteId, String model, Integer epoch, String error) {
    }

    /**
     * Removes the run's failed answers, their scores and their key entries ({@link RequestKeyIndex#forget}),
     * in the connection's current transaction (the caller commits).
     */
    static FailedAnswerReset reset(Connection c, RequestKeyIndex requestKeys, String runId) throws SQLException {
        List<Removed> removed = new ArrayList<>();
        try (PreparedStatement select = c.prepareStatement("SELECT job_id, vignette_id, run_model, epoch, error"
                + " FROM panoptes_records WHERE run_id = ? AND error IS NOT NULL ORDER BY job_id, vignette_id")) {
            select.setString(1, runId);
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    int epoch = rs.getInt(4);
                    removed.add(new Removed(rs.getString(1), rs.getString(2), rs.getString(3),
                            rs.wasNull() ? null : epoch, rs.getString(5)));
                }
            }
        }
        if (removed.isEmpty()) {
            return new FailedAnswerReset(runId, removed, 0);
        }
        long scores;
        try (PreparedStatement delete = c.prepareStatement("DELETE FROM panoptes_scores WHERE EXISTS (SELECT 1 FROM"
                + " panoptes_records r WHERE r.run_id = ? AND r.error IS NOT NULL AND r.job_id = panoptes_scores.job_id"
                + " AND r.vignette_id = panoptes_scores.vignette_id)")) {
            delete.setString(1, runId);
            scores = delete.executeUpdate();
        }
        requestKeys.forget(c, "run_id = ? AND error IS NOT NULL", runId);
        try (PreparedStatement delete = c.prepareStatement(
                "DELETE FROM panoptes_records WHERE run_id = ? AND error IS NOT NULL")) {
            delete.setString(1, runId);
            delete.executeUpdate();
        }
        requestKeys.settle(c);
        return new FailedAnswerReset(runId, removed, scores);
    }
}
