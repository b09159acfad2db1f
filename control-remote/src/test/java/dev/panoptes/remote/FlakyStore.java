package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.StoreException;


/**
 * An in-memory store that fails the writes a {@link ScheduleSimulation} tells it to: the next
 * few fail before writing (an outage), or after (the commit went through and its answer was
 * lost, so the retry finds its own rows). Reads never fail. Driven by one thread.
 */
final class FlakyStore extends ForwardingResultStore {
    private int failBefore;
    private int failAfter;
    private int failed;

    FlakyStore() {
        super(new InMemoryResultStore());
    }

    /** The next {@code n} writes fail without writing. */
    void failNext(int n) {
        failBefore += n;
    }

    /** The next write is written, then fails as if its commit's answer was lost. */
    void failNextAfterWriting() {
        failAfter++;
    }

    int failedWrites() {
        return failed;
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
    public Receipt record(JobOutcome outcome, String workerId) {
        before();
        Receipt receipt = delegate().record(outcome, workerId);
        after();
        return receipt;
    }

    @Override
    public Receipt record(Job job, JobOutcome outcome, String workerId) {
        before();
        Receipt receipt = delegate().record(job, outcome, workerId);
        after();
        return receipt;
    }

    @Override
    public void recordFailure(Job job, String reason, int attempts) {
        before();
        delegate().recordFailure(job, reason, attempts);
        after();
    }

    @Override
    public void recordFailure(JobId jobId, String reason, int attempts) {
        before();
        delegate().recordFailure(jobId, reason, attempts);
        after();
    }
}
