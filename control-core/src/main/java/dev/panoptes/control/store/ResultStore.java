package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Where outcomes end up. Idempotent by {@code (jobId, vignetteId)}: the first record for a key
 * is stored, and any later one is counted as a duplicate and changes nothing, so that a job
 * delivered twice (at-least-once) is stored once.
 *
 * <p>A write that failed with a {@link StoreException} may be repeated, and a scheduler does
 * repeat it until the store takes it: the store then keeps what it has, and should not count as
 * duplicates the records of an earlier attempt of the same write that it committed after all
 * (see {@link JdbcResultStore}). A {@link RecordRejectedException} says that repeating cannot help.
 *
 * <p>Implementations are thread-safe.
 */
public interface ResultStore extends AutoCloseable {
    /**
     * Stores every record of an outcome that is not stored yet, atomically per outcome. A job
     * previously recorded as failed and now answered is no longer failed.
     *
     * @param workerId the worker that produced it, kept with each record
     * @return how many records were new and how many were duplicates
     * @throws RecordRejectedException when the store refuses these records for what they hold
     * @throws StoreException when the store cannot write now
     */
    Receipt record(JobOutcome outcome, String workerId);

    /**
     * Stores an outcome as {@link #record(JobOutcome, String)} does, keeping with each record what
     * the job knows about it (its run, model, epoch, prompt, expected answer and metadata) where
     * the store has room for it. The scheduler calls this one.
     *
     * @throws RecordRejectedException when the store refuses these records for what they hold
     * @throws StoreException when the store cannot write now
     */
    default Receipt record(Job job, JobOutcome outcome, String workerId) {
        return record(outcome, workerId);
    }

    /**
     * Stores answers as {@link #record(Job, JobOutcome, String)} stores each, in their order, and
     * appends to {@code done}, in the same order, what became of each once it is committed or
     * refused: only an answer in {@code done} may be acknowledged as stored. A store may commit
     * many answers in one transaction ({@link JdbcResultStore} does); one answer the store refuses
     * for what it holds is refused alone, its neighbours stored. Idempotence holds inside the
     * list too: an answer given twice is stored once, its second copy counted duplicate. The
     * default stores them one by one through {@link #record(Job, JobOutcome, String)}.
     *
     * @param done receives one {@link Written} per answer done, in order
     * @throws StoreException when the store cannot write now: the answers before the failure that
     *         are in {@code done} are done; the others (none, when the store commits them together)
     *         are not stored and may be written again
     */
    default void recordAll(List<Answer> answers, List<Written> done) {
        for (Answer a : answers) {
            try {
                done.add(new Written(record(a.job(), a.outcome(), a.workerId()), null));
            } catch (RecordRejectedException e) {
                done.add(new Written(null, e));
            }
        }
    }

    /**
     * Records that a job failed for good, as {@link #recordFailure(JobId, String, int)} does,
     * keeping its run and model where the store has room for them. The scheduler calls this one.
     *
     * @throws StoreException when the store cannot write
     */
    default void recordFailure(Job job, String reason, int attempts) {
        recordFailure(job.id(), reason, attempts);
    }

    /**
     * Records that a job failed for good: its reason and how many attempts were made. A later
     * failure of the same job replaces the earlier one.
     *
     * @throws StoreException when the store cannot write
     */
    void recordFailure(JobId jobId, String reason, int attempts);

    /** The vignette ids stored for a job; empty when none. */
    Set<String> storedVignetteIds(JobId jobId);

    /** True when every vignette of the job has a stored record. */
    default boolean isComplete(Job job) {
        Set<String> stored = storedVignetteIds(job.id());
        return job.spec().vignettes().stream().allMatch(v -> stored.contains(v.id()));
    }

    /**
     * The jobs among {@code jobs} that are complete in this store. Stores override this to
     * answer a whole suite in one pass; the default asks {@link #isComplete(Job)} per job.
     */
    default Set<JobId> completedAmong(Collection<Job> jobs) {
        Set<JobId> complete = new HashSet<>();
        for (Job job : jobs) {
            if (isComplete(job)) {
                complete.add(job.id());
            }
        }
        return complete;
    }

    /** The number of records stored. */
    long recordCount();

    /** Duplicates ignored since this store was opened. */
    long duplicateCount();

    /** Every stored record, in the order of storing. */
    void forEachRecord(Consumer<StoredRecord> action);

    /** Every failure recorded and not answered since, in no particular order. */
    void forEachFailure(Consumer<JobFailure> action);

    /** Releases what the store holds; idempotent. */
    @Override
    void close();

    /**
     * What {@link #record} did.
     *
     * @param stored     records newly stored
     * @param duplicates records that were already there and were ignored
     */
    record Receipt(int stored, int duplicates) {
    }

    /** One answer for {@link #recordAll}: the arguments of {@link #record(Job, JobOutcome, String)}. */
    record Answer(Job job, JobOutcome outcome, String workerId) {
    }

    /**
     * What {@link #recordAll} did with one answer: stored ({@code receipt}), or refused for what
     * it holds ({@code refused}); exactly one is set.
     */
    record Written(Receipt receipt, RecordRejectedException refused) {
    }
}
