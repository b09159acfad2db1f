package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ResultStore.Receipt;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How a {@link JdbcResultStore} writes an outcome: its new records (a record already there is a
 * duplicate, except one that a write of its own whose commit failed midway left), each scored as
 * it is stored into the current scoring of its run (see {@link FailedAnswers} for failed answers),
 * and the job's failure cleared, all in one transaction.
 *
 * <p>Not thread-safe: its store calls it under its own lock.
 */
final class OutcomeWriter {
    /** The scorer a run's first scoring names when the store's scoring names none. */
    static final String UNNAMED_SCORER = "(unnamed scorer)";

    private final StoreConnection db;
    private final Clock clock;
    /**
     * Jobs whose records' commit failed midway, with the fingerprints (worker, time) of the rows
     * it wrote: a later write of the job that finds such a row counts it stored, not duplicate.
     */
    private final Map<String, List<OutcomeRows.Stamp>> recordsInDoubt = new HashMap<>();
    /**
     * The scoring number that answers stored now are scored into, per run: the run's latest when
     * first asked, then the one this store made last.
     */
    private final Map<String, Integer> currentScorings = new HashMap<>();

    OutcomeWriter(StoreConnection db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** Answers of the run stored from now on go into scoring {@code number} (its store just made it). */
    void scoringMade(String runId, int number) {
        currentScorings.put(ScoreTables.runKey(runId), number);
    }

    /** The run's rows are gone: its scoring is looked up (or made) afresh when it is stored again. */
    void runDeleted(String runId) {
        currentScorings.remove(ScoreTables.runKey(runId));
    }

    /**
     * Stores an outcome's new records, each scored by {@code scorer} into the current scoring of
     * its run, and clears the job's failure, in one transaction.
     *
     * @throws RecordRejectedException when the database refuses the records for what they hold
     * @throws StoreException when it cannot write now (the write may be repeated)
     */
    Receipt store(Job job, JobOutcome outcome, String workerId, RecordScoring scorer) {
        return store(job, outcome, workerId, scorer, Map.of());
    }

    /**
     * As {@link #store(Job, JobOutcome, String, RecordScoring)}, marking the records whose vignette
     * {@code cachedFrom} names as served from the cache, copied from that run's answer.
     */
    Receipt store(Job job, JobOutcome outcome, String workerId, RecordScoring scorer, Map<String, String> cachedFrom) {
        db.ready();
        long now = clock.millis();
        PreparedStatement insert = db.insertRecord();
        Map<String, Vignette> vignettes = job == null ? Map.of() : OutcomeRows.vignettesById(job);
        String jobId = outcome.jobId().value();
        List<OutcomeRows.Stamp> doubts = recordsInDoubt.get(jobId);
        boolean scored = job != null && scorer != RecordScoring.NONE;
        String scoringRun = job == null ? null : ScoreTables.runKey(job.runId());
        boolean committing = false;
        try {
            int scoringNumber = scored ? currentScoring(scoringRun, scorer, now) : 0;
            int stored = 0;
            int dup = 0;
            int scores = 0;
            for (ResponseRecord r : OutcomeRows.inKeyOrder(outcome.records())) {
                Vignette v = vignettes.get(r.vignetteId());
                OutcomeRows.bindRecord(insert, jobId, r, workerId, now, job, v, cachedFrom.get(r.vignetteId()));
                if (insert.executeUpdate() == 1 || doubts != null && leftByDoubt(jobId, r.vignetteId(), doubts)) {
                    stored++;
                    if (scored && v != null && scoreAtStore(jobId, r, v, scorer, scoringNumber)) {
                        scores++;
                    }
                } else {
                    dup++;
                }
            }
            if (scores > 0) {
                db.insertScore().executeBatch();
            }
            db.clearFailure().setString(1, jobId);
            db.clearFailure().executeUpdate();
            committing = true;
            db.connection().commit();
            recordsInDoubt.remove(jobId);
            if (scored) {
                currentScorings.put(scoringRun, scoringNumber);
            }
            return new Receipt(stored, dup);
        } catch (SQLException | RuntimeException e) {
            SQLException cause = e instanceof SQLException se ? se : new SQLException(e.toString(), e);
            clearScoresQuietly(cause);
            db.rollbackQuietly(cause);
            if (committing) {
                // The server may have committed before the connection failed: a repeat of this
                // write must not count these rows, if they are there, as another delivery's.
                recordsInDoubt.computeIfAbsent(jobId, k -> new ArrayList<>(1))
                        .add(new OutcomeRows.Stamp(workerId, now));
            }
            String message = db.scrub("cannot store the outcome of job " + outcome.jobId() + " from worker " + workerId
                    + " in " + db.description() + ": " + e.getMessage());
            if (db.refusesTheData(e)) {
                throw new RecordRejectedException(message, e);
            }
            throw new StoreException(message, e);
        }
    }

    /**
     * The scoring answers of a run stored now go into: the one known, else the run's latest, else
     * a first one made now (in the caller's transaction; remembered once it commits).
     */
    private int currentScoring(String runId, RecordScoring scorer, long now) throws SQLException {
        Integer known = currentScorings.get(runId);
        if (known != null) {
            return known;
        }
        Scoring latest = ScoreTables.latest(db.connection(), runId);
        if (latest == null) {
            latest = ScoreTables.create(db.connection(), runId, scorer.spec() == null ? UNNAMED_SCORER : scorer.spec(),
                    Scoring.RUN, Instant.ofEpochMilli(now));
        }
        return latest.number();
    }

    /**
     * Batches the score of an answer just stored, for the caller's transaction.
     *
     * @return false when the answer is not scored
     */
    private boolean scoreAtStore(String jobId, ResponseRecord r, Vignette v, RecordScoring scorer, int scoringNumber)
            throws SQLException {
        String spec = v.scorer() != null ? v.scorer() : scorer.spec();
        ScoreEntry score = FailedAnswers.score(r, spec, v.expected(), () -> scorer.score(v, r));
        if (score == null) {
            return false;
        }
        ScoreTables.setKey(db.insertScore(), jobId, r.vignetteId(), scoringNumber);
        ScoreTables.setScore(db.insertScore(), 4, score);
        db.insertScore().addBatch();
        return true;
    }

    /** A failed write's batched scores must not go out with the next one. */
    private void clearScoresQuietly(Exception cause) {
        try {
            PreparedStatement insert = db.insertScore();
            if (insert != null) {
                insert.clearBatch();
            }
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /** True when the stored record of this vignette is the one a write in doubt left. */
    private boolean leftByDoubt(String jobId, String vignetteId, List<OutcomeRows.Stamp> doubts) throws SQLException {
        OutcomeRows.Stamp stamp = OutcomeRows.stamp(db.connection(), jobId, vignetteId);
        return stamp != null && doubts.contains(stamp);
    }
}
