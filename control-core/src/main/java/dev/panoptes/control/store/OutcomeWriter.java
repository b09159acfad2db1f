package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ResultStore.Receipt;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a {@link JdbcResultStore} writes an outcome: its new records (a record already there is a
 * duplicate, except one that a write of its own whose commit failed midway left), each with the
 * score it was given before the transaction ({@link StoreScoring}) in the current scoring of its
 * run (see {@link FailedAnswers} for failed answers), and the job's failure cleared, all in one
 * transaction; or many outcomes so in one transaction
 * ({@link #storeAll}), each statement prepared once per connection and sent as one JDBC batch, so
 * that a commit (on SQLite a WAL append, on PostgreSQL a round trip and a WAL flush) is paid once
 * per batch rather than once per answer.
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
        return storeAll(List.of(Pending.scored(job, outcome, workerId, cachedFrom, scorer)), scorer).get(0);
    }

    /**
     * One outcome to store: as the arguments of {@link #store(Job, JobOutcome, String, RecordScoring, Map)},
     * with its records in key order ({@link OutcomeRows#inKeyOrder}), the vignette each answers and
     * each one's score, made before the transaction ({@link StoreScoring#scoresOf}): what the write
     * needs per row, found once.
     *
     * @param rows      the outcome's records in key order
     * @param vignettes the vignette of each row, or null where unknown (no job, or not the job's)
     * @param scores    the score of each row whose answer is scored, null where not; null for none
     */
    record Pending(Job job, JobOutcome outcome, String workerId, Map<String, String> cachedFrom,
                   List<ResponseRecord> rows, Vignette[] vignettes, ScoreEntry[] scores) {
        /** The outcome with its answers scored by {@code scorer}, on the calling thread. */
        static Pending scored(Job job, JobOutcome outcome, String workerId, Map<String, String> cachedFrom,
                              RecordScoring scorer) {
            List<ResponseRecord> rows = OutcomeRows.inKeyOrder(outcome.records());
            Vignette[] vignettes = OutcomeRows.vignettesOf(job, rows);
            return new Pending(job, outcome, workerId, cachedFrom, rows, vignettes,
                    StoreScoring.scoresOf(job, rows, vignettes, scorer));
        }
    }

    /**
     * Stores outcomes as {@link #store(Job, JobOutcome, String, RecordScoring, Map)} stores each,
     * all in one transaction: every record in one JDBC batch of the reused insert (the lean one
     * when no answer of the list keeps the columns it leaves out), then their scores and, when the
     * database records any failure, the jobs' cleared failures in two more. All or nothing: when it throws, none is
     * stored. A record that two outcomes of the list carry is stored once, the second a duplicate.
     *
     * @return one receipt per outcome, in order
     * @throws RecordRejectedException when the database refuses a record of one of them for what
     *         it holds (which one is not known: store them one by one to find out)
     * @throws StoreException when it cannot write now (the whole list may be written again)
     * @throws StoreFencedException when another coordinator took the run over (nothing was written)
     */
    List<Receipt> storeAll(List<Pending> pending, RecordScoring scorer) {
        db.ready();
        db.checkFence("store the outcome of job " + pending.get(0).outcome().jobId());
        long now = clock.millis();
        boolean lean = lean(pending);
        PreparedStatement insert = lean ? db.insertLeanRecord() : db.insertRecord();
        Map<String, Integer> scoringsMade = new HashMap<>(2);
        boolean committing = false;
        try {
            int rowCount = 0;
            for (Pending o : pending) {
                String jobId = o.outcome().jobId().value();
                List<ResponseRecord> rows = o.rows();
                for (int i = 0; i < rows.size(); i++) {
                    ResponseRecord r = rows.get(i);
                    if (lean) {
                        OutcomeRows.bindLeanRecord(insert, jobId, r, o.workerId(), now, o.job(), o.vignettes()[i]);
                    } else {
                        OutcomeRows.bindRecord(insert, jobId, r, o.workerId(), now, o.job(), o.vignettes()[i],
                                o.cachedFrom().isEmpty() ? null : o.cachedFrom().get(r.vignetteId()));
                    }
                    insert.addBatch();
                }
                rowCount += rows.size();
            }
            int[] inserted = rowCount == 0 ? new int[0] : insert.executeBatch();
            // Asked only once the inserts hold the database's write lock (SQLite) or their rows'
            // (PostgreSQL): a failure recorded by another connection before then is seen, and none
            // of these jobs' can be recorded after it until this commits. A read first would also
            // turn SQLite's wait for a busy writer into a failed write (a stale snapshot).
            boolean anyFailure = rowCount == 0 || anyFailure();
            // A driver may not say what a row of a batch did: pgjdbc with reWriteBatchedInserts
            // answers SUCCESS_NO_INFO for each. Such a row is this write's when the record there
            // carries this write's stamp (its worker and time), as after a commit in doubt.
            Map<String, OutcomeRows.Stamp> stamps = anyUnknown(inserted)
                    ? OutcomeRows.stamps(db.connection(), jobIdsOf(pending)) : Map.of();
            // Only a stamp or a doubt can make a row that inserted nothing this write's: without
            // either, a row is stored exactly when its insert counted 1 (a copy of it earlier in
            // this batch would have taken it, and made this insert count 0), so the copies need
            // not be tracked.
            Set<String> seen = stamps.isEmpty() && recordsInDoubt.isEmpty() ? null : new HashSet<>();
            List<Receipt> receipts = new ArrayList<>(pending.size());
            int scores = 0;
            int row = 0;
            for (int p = 0; p < pending.size(); p++) {
                Pending o = pending.get(p);
                String jobId = o.outcome().jobId().value();
                List<OutcomeRows.Stamp> doubts = seen == null ? null : recordsInDoubt.get(jobId);
                boolean scored = o.job() != null && scorer != RecordScoring.NONE && o.scores() != null;
                int scoringNumber = scored ? scoringOf(o.job().runId(), scorer, now, scoringsMade) : 0;
                OutcomeRows.Stamp ours = seen == null ? null : new OutcomeRows.Stamp(o.workerId(), now);
                int stored = 0;
                int dup = 0;
                List<ResponseRecord> rows = o.rows();
                for (int i = 0; i < rows.size(); i++, row++) {
                    ResponseRecord r = rows.get(i);
                    boolean here;
                    if (seen == null) {
                        here = inserted[row] == 1;
                    } else {
                        String key = jobId + '\u0000' + r.vignetteId();
                        // A copy earlier in this list took the row: this one is a duplicate, whatever a doubt says.
                        here = seen.add(key) && (insertedHere(inserted[row], ours, stamps.get(key))
                                || doubts != null && leftByDoubt(jobId, r.vignetteId(), doubts));
                    }
                    if (here) {
                        stored++;
                        ScoreEntry score = scored ? o.scores()[i] : null;
                        if (score != null) {
                            ScoreTables.setKey(db.insertScore(), jobId, r.vignetteId(), scoringNumber);
                            ScoreTables.setScore(db.insertScore(), 4, score);
                            db.insertScore().addBatch();
                            scores++;
                        }
                    } else {
                        dup++;
                    }
                }
                receipts.add(new Receipt(stored, dup));
                if (anyFailure) {
                    db.clearFailure().setString(1, jobId);
                    db.clearFailure().addBatch();
                }
            }
            if (scores > 0) {
                db.insertScore().executeBatch();
            }
            if (anyFailure && !pending.isEmpty()) {
                db.clearFailure().executeBatch();
            }
            committing = true;
            db.connection().commit();
            for (Pending o : pending) {
                recordsInDoubt.remove(o.outcome().jobId().value());
            }
            currentScorings.putAll(scoringsMade);
            db.committed(pending.size());
            return receipts;
        } catch (SQLException | RuntimeException e) {
            SQLException cause = e instanceof SQLException se ? se : new SQLException(e.toString(), e);
            clearBatchesQuietly(cause);
            db.rollbackQuietly(cause);
            if (committing) {
                // The server may have committed before the connection failed: a repeat of this
                // write must not count these rows, if they are there, as another delivery's.
                for (Pending o : pending) {
                    recordsInDoubt.computeIfAbsent(o.outcome().jobId().value(), k -> new ArrayList<>(1))
                            .add(new OutcomeRows.Stamp(o.workerId(), now));
                }
            }
            Pending head = pending.get(0);
            String message = db.scrub("cannot store the outcome of job " + head.outcome().jobId() + " from worker "
                    + head.workerId() + (pending.size() == 1 ? "" : " and of " + (pending.size() - 1) + " more in its"
                    + " batch") + " in " + db.description() + ": " + e.getMessage());
            if (db.refusesTheData(e)) {
                throw new RecordRejectedException(message, e);
            }
            throw new StoreException(message, e);
        } catch (Error e) {
            // The virtual machine failed (out of memory, say): whatever this did so far must not
            // be committed by the next operation.
            clearBatchesQuietly(e);
            db.rollbackQuietly(e);
            throw e;
        }
    }

    /**
     * True when every answer of the outcomes can go in by {@link OutcomeRows#INSERT_LEAN_RECORD}
     * ({@link OutcomeRows#lean}): one statement serves the whole batch, as a JDBC batch is of one.
     */
    private static boolean lean(List<Pending> pending) {
        for (Pending o : pending) {
            List<ResponseRecord> rows = o.rows();
            for (int i = 0; i < rows.size(); i++) {
                ResponseRecord r = rows.get(i);
                if (!OutcomeRows.lean(r, o.job(), o.vignettes()[i],
                        o.cachedFrom().isEmpty() ? null : o.cachedFrom().get(r.vignetteId()))) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Whether the database records any failure, read in the write's transaction: when it records
     * none, no answer of the write has a failure to clear, and the write sends no
     * {@link OutcomeRows#CLEAR_FAILURE} (one statement per outcome, most of them finding nothing).
     */
    private boolean anyFailure() throws SQLException {
        try (ResultSet rs = db.anyFailure().executeQuery()) {
            return rs.next();
        }
    }

    /** The scoring of a run for this transaction: one made or found in it, else {@link #currentScoring}. */
    private int scoringOf(String runId, RecordScoring scorer, long now, Map<String, Integer> made) throws SQLException {
        String key = ScoreTables.runKey(runId);
        Integer number = made.get(key);
        if (number == null) {
            number = currentScoring(key, scorer, now);
            made.put(key, number);
        }
        return number;
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
     * True when the batch inserted a row: its count says so, or, when the driver gave no definite
     * count, the record there carries this write's stamp.
     */
    private static boolean insertedHere(int count, OutcomeRows.Stamp ours, OutcomeRows.Stamp there) {
        return count == 1 || count != 0 && ours.equals(there);
    }

    /** True when some row's count is not a definite 0 or 1. */
    private static boolean anyUnknown(int[] counts) {
        for (int count : counts) {
            if (count != 0 && count != 1) {
                return true;
            }
        }
        return false;
    }

    private static Set<String> jobIdsOf(List<Pending> pending) {
        Set<String> ids = new HashSet<>();
        for (Pending o : pending) {
            ids.add(o.outcome().jobId().value());
        }
        return ids;
    }

    /** A failed write's batched rows must not go out with the next one. */
    private void clearBatchesQuietly(Throwable cause) {
        for (PreparedStatement batched : new PreparedStatement[] {db.insertRecord(), db.insertLeanRecord(),
                db.insertScore(), db.clearFailure()}) {
            try {
                if (batched != null) {
                    batched.clearBatch();
                }
            } catch (SQLException e) {
                cause.addSuppressed(e);
            }
        }
    }

    /** True when the stored record of this vignette is the one a write in doubt left. */
    private boolean leftByDoubt(String jobId, String vignetteId, List<OutcomeRows.Stamp> doubts) throws SQLException {
        OutcomeRows.Stamp stamp = OutcomeRows.stamp(db.connection(), jobId, vignetteId);
        return stamp != null && doubts.contains(stamp);
    }
}
