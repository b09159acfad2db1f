package dev.panoptes.control.schedule;

import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;

import java.util.ArrayList;
import java.util.List;

/**
 * The store calls of a {@link StoreWriter}: a final failure alone, or the answers queued one
 * behind another in one {@link ResultStore#recordAll} call (one transaction on a JDBC store), up to
 * {@value #BATCH_RECORDS} records or {@link #BATCH_CHARS} characters; and what the store reports
 * done turned into the events that tell the run, in order. The writer owns the retries, the
 * store's up or down state and when to stop.
 *
 * <p>Not thread-safe: only the thread that writes calls it.
 */
final class StoreCalls {
    /**
     * A batch of answers stops growing at this many records: it bounds how long one transaction
     * holds the database's write lock (another process on a SQLite file waits that long). The rate
     * is flat from a few hundred rows per transaction on (the benchmarks' {@code store --batch}).
     */
    static final int BATCH_RECORDS = 2048;
    /** A batch of answers stops growing past this many characters of responses (roughly 2 bytes each). */
    static final long BATCH_CHARS = 4L << 20;
    private final ResultStore store;
    private final StoreWriter.Outcomes outcomes;
    /** The answers of the store call in progress and what became of them. */
    private final List<ResultStore.Answer> answers = new ArrayList<>(StoreWriter.BATCH);
    private final List<ResultStore.Written> written = new ArrayList<>(StoreWriter.BATCH);

    StoreCalls(ResultStore store, StoreWriter.Outcomes outcomes) {
        this.store = store;
        this.outcomes = outcomes;
    }

    /**
     * Does the write at {@code from} and, when it is an answer, the answers right behind it, up to
     * {@link #BATCH_RECORDS} records or {@link #BATCH_CHARS}, in one call of the store (one
     * transaction on a JDBC store); adds to {@code done} the event that tells the run of each write done, in order.
     *
     * @throws StoreException when the store fails: the writes in {@code done} are done, the rest not
     */
    void writeFrom(List<StoreWriter.Write> batch, int from, List<Runnable> done) {
        if (batch.get(from) instanceof StoreWriter.FailureWrite f) {
            try {
                store.recordFailure(f.state().job, f.reason(), f.attempts());
                done.add(() -> outcomes.failureStored(f));
            } catch (RecordRejectedException e) {
                done.add(() -> outcomes.refused(f, e));
            }
            return;
        }
        answers.clear();
        written.clear();
        long chars = 0;
        int records = 0;
        for (int i = from; i < batch.size() && batch.get(i) instanceof StoreWriter.RecordWrite r
                && (answers.isEmpty() || chars < BATCH_CHARS && records < BATCH_RECORDS); i++) {
            answers.add(new ResultStore.Answer(r.state().job, r.outcome(), r.worker().id()));
            chars += size(r.outcome());
            records += r.outcome().records().size();
        }
        try {
            store.recordAll(answers, written);
        } finally {
            for (int i = 0; i < written.size(); i++) {
                StoreWriter.RecordWrite r = (StoreWriter.RecordWrite) batch.get(from + i);
                ResultStore.Written w = written.get(i);
                done.add(w.refused() == null ? () -> outcomes.stored(r, w.receipt()) : () -> outcomes.refused(r,
                        w.refused()));
            }
        }
    }

    /** Roughly what an outcome's records hold, in characters: enough to bound a batch's memory. */
    private static long size(JobOutcome outcome) {
        long chars = 0;
        for (ResponseRecord r : outcome.records()) {
            chars += 64 + (r.response() == null ? 0 : r.response().length());
        }
        return chars;
    }
}
