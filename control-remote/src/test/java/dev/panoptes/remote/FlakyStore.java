package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.StoreException;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * An in-memory store that fails the way a {@link ScheduleSimulation} tells it to, as a database
 * does: the next few writes fail before writing (an outage), or after (the commit went through
 * and its answer was lost, so the retry finds its own rows); a batch of answers fails midway,
 * after storing and reporting some of them, with the next one committed in doubt or not at all;
 * the answers or the failure records of chosen jobs are refused for what they hold. Reads never
 * fail.
 *
 * <p>Like {@link dev.panoptes.control.store.JdbcResultStore}, a write repeated after a commit in
 * doubt does not count its own rows as duplicates, so that {@link #duplicateCount()} is what a
 * run's summary must say. Records already stored when the run starts ({@link #storeElsewhere},
 * another coordinator sharing the database) are duplicates when the run stores them again.
 *
 * <p>It also checks what every call of it must respect: a batch of answers stops growing once
 * it holds {@value #BATCH_RECORDS} records (its last answer may take it past them), and an
 * answer it reported done is never written again (a write that failed midway is repeated from
 * the first answer not done); a breach is reported to the violation sink given. Driven by one thread.
 */
final class FlakyStore extends ForwardingResultStore {
    /** A batch of answers stops growing once it holds this many records (the store writer's promise). */
    static final int BATCH_RECORDS = 2048;

    private final Consumer<String> violations;
    private final Set<JobId> refuseAnswers = new HashSet<>();
    private final Set<JobId> refuseFailures = new HashSet<>();
    /** Jobs whose answer this store reported done (stored or refused): never to be written again. */
    private final Set<JobId> acknowledged = new HashSet<>();
    /** Records written by a commit whose answer was lost: their retry stores them, not duplicates. */
    private final Set<String> inDoubt = new HashSet<>();
    private int failBefore;
    private int failAfter;
    /** The next batch with more answers than this fails after storing this many; -1 when none is due. */
    private int failMidBatch = -1;
    private boolean midBatchInDoubt;
    private int failed;
    private int partialBatches;
    private int refusedAnswers;
    private int refusedFailures;
    private long duplicatesForgiven;
    private long duplicatesBefore;
    private int largestBatchRecords;

    /** @param violations told of each broken promise, to fail the schedule at its next check */
    FlakyStore(Consumer<String> violations) {
        super(new InMemoryResultStore());
        this.violations = violations;
    }

    /** The next {@code n} writes fail without writing. */
    void failNext(int n) {
        failBefore += n;
    }

    /** The next write is written, then fails as if its commit's answer was lost. */
    void failNextAfterWriting() {
        failAfter++;
    }

    /**
     * The next batch of more than {@code stored} answers stores and reports the first
     * {@code stored}, then fails; when {@code inDoubt}, the answer after them is committed too,
     * unreported, as if the answer to its commit was lost.
     */
    void failMidBatch(int stored, boolean inDoubt) {
        failMidBatch = stored;
        midBatchInDoubt = inDoubt;
    }

    /** Every answer of this job is refused for what it holds. */
    void refuseAnswersOf(JobId job) {
        refuseAnswers.add(job);
    }

    /** The failure record of this job is refused for what it holds. */
    void refuseFailureOf(JobId job) {
        refuseFailures.add(job);
    }

    /** Stores a job's answer before the run, as another coordinator sharing the database would. */
    void storeElsewhere(JobOutcome outcome) {
        delegate().record(outcome, "elsewhere");
        duplicatesBefore = delegate().duplicateCount();
    }

    int failedWrites() {
        return failed;
    }

    /** Batches that failed after storing part of their answers. */
    int partialBatches() {
        return partialBatches;
    }

    int refusedAnswers() {
        return refusedAnswers;
    }

    /** Failure records refused: the run settles those jobs as failed without a record. */
    int refusedFailures() {
        return refusedFailures;
    }

    /** The most records one batch of answers held. */
    int largestBatchRecords() {
        return largestBatchRecords;
    }

    /** Duplicates the run's writes met: repeats of a commit in doubt and records stored before it excluded. */
    @Override
    public long duplicateCount() {
        return delegate().duplicateCount() - duplicatesBefore - duplicatesForgiven;
    }

    private void before() {
        if (failBefore > 0) {
            failBefore--;
            failed++;
            throw new StoreException("simulated store outage", null);
        }
    }

    private void after() {
        if (failAfter > 0) {
            failAfter--;
            failed++;
            throw new StoreException("simulated lost commit answer", null);
        }
    }

    @Override
    public void recordAll(List<Answer> answers, List<Written> done) {
        int records = 0;
        for (Answer a : answers) {
            records += a.outcome().records().size();
        }
        largestBatchRecords = Math.max(largestBatchRecords, records);
        int beforeLast = answers.isEmpty() ? 0 : records - answers.get(answers.size() - 1).outcome().records().size();
        if (beforeLast >= BATCH_RECORDS) {
            violations.accept("a batch of " + answers.size() + " answers held " + records + " records: it went on"
                    + " growing past the " + BATCH_RECORDS + " at which a batch stops");
        }
        int failAt = failMidBatch >= 0 && answers.size() > failMidBatch ? failMidBatch : -1;
        if (failAt >= 0) {
            failMidBatch = -1;
        }
        for (int i = 0; i < answers.size(); i++) {
            Answer a = answers.get(i);
            if (i == failAt) {
                if (midBatchInDoubt && !refuseAnswers.contains(a.job().id())) {
                    store(a.job(), a.outcome(), a.workerId(), true);
                }
                partialBatches++;
                failed++;
                throw new StoreException("simulated failure after " + failAt + " of a batch of " + answers.size()
                        + " answers" + (midBatchInDoubt ? ", the next one committed in doubt" : ""), null);
            }
            if (acknowledged.contains(a.job().id())) {
                violations.accept("the answer of " + a.job().id() + " was written again after the store reported it"
                        + " done");
            }
            try {
                done.add(new Written(record(a.job(), a.outcome(), a.workerId()), null));
            } catch (RecordRejectedException e) {
                done.add(new Written(null, e));
            }
            acknowledged.add(a.job().id());
        }
    }

    @Override
    public Receipt record(JobOutcome outcome, String workerId) {
        throw new AssertionError("the scheduler stores answers with their job");
    }

    @Override
    public Receipt record(Job job, JobOutcome outcome, String workerId) {
        before();
        if (refuseAnswers.contains(job.id())) {
            refusedAnswers++;
            throw new RecordRejectedException("simulated refusal of the answer of " + job.id(), null);
        }
        boolean lost = failAfter > 0;
        Receipt receipt = store(job, outcome, workerId, lost);
        after();
        return receipt;
    }

    /** Stores the records; when {@code inDoubtCommit}, remembers them so that their retry is no duplicate. */
    private Receipt store(Job job, JobOutcome outcome, String workerId, boolean inDoubtCommit) {
        Set<String> already = delegate().storedVignetteIds(job.id());
        int forgiven = 0;
        for (ResponseRecord r : outcome.records()) {
            if (inDoubt.remove(key(job.id(), r))) {
                forgiven++;
            }
        }
        Receipt receipt = delegate().record(job, outcome, workerId);
        if (inDoubtCommit) {
            // The caller never hears of this commit, so neither do its duplicates (a database
            // counts them with the commit's answer); only what it wrote is in doubt, and a record
            // stored before stays a duplicate when the write is repeated.
            duplicatesForgiven += receipt.duplicates() - forgiven;
            for (ResponseRecord r : outcome.records()) {
                if (!already.contains(r.vignetteId())) {
                    inDoubt.add(key(job.id(), r));
                }
            }
        }
        duplicatesForgiven += forgiven;
        return new Receipt(receipt.stored() + forgiven, receipt.duplicates() - forgiven);
    }

    private static String key(JobId job, ResponseRecord r) {
        return job + "\u0000" + r.vignetteId();
    }

    @Override
    public void recordFailure(Job job, String reason, int attempts) {
        before();
        if (refuseFailures.contains(job.id())) {
            refusedFailures++;
            throw new RecordRejectedException("simulated refusal of the failure of " + job.id(), null);
        }
        delegate().recordFailure(job, reason, attempts);
        after();
    }

    @Override
    public void recordFailure(JobId jobId, String reason, int attempts) {
        throw new AssertionError("the scheduler records failures with their job");
    }
}
