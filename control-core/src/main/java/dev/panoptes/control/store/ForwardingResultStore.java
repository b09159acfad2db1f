package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A {@link ResultStore} that passes every call to another, default methods included, so that
 * the other's own overrides (one pass over a suite, the job's context kept with each record)
 * still apply. Extend it to change a few calls (time the writes, fail some on purpose) and leave
 * the rest as they are. {@link #close()} closes the store it wraps unless overridden. One exception:
 * {@link #recordAll} stores the answers one by one through this store's own {@link #record(Job,
 * JobOutcome, String)}, so that a subclass that changes {@code record} sees every answer; a subclass
 * that leaves writes alone should pass {@code recordAll} on too ({@link #forwardRecordAll}), so
 * that the store it wraps commits a batch at once.
 *
 * <p>Threads: as the store it wraps.
 */
public abstract class ForwardingResultStore implements ResultStore {
    private final ResultStore delegate;

    /** @throws NullPointerException when delegate is null */
    protected ForwardingResultStore(ResultStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The store every call goes to. */
    protected final ResultStore delegate() {
        return delegate;
    }

    @Override
    public Receipt record(JobOutcome outcome, String workerId) {
        return delegate.record(outcome, workerId);
    }

    @Override
    public Receipt record(Job job, JobOutcome outcome, String workerId) {
        return delegate.record(job, outcome, workerId);
    }

    /** {@link #recordAll} as the store this one wraps does it, for subclasses that leave writes alone. */
    protected final void forwardRecordAll(List<Answer> answers, List<Written> done) {
        delegate.recordAll(answers, done);
    }

    @Override
    public void recordFailure(Job job, String reason, int attempts) {
        delegate.recordFailure(job, reason, attempts);
    }

    @Override
    public void recordFailure(JobId jobId, String reason, int attempts) {
        delegate.recordFailure(jobId, reason, attempts);
    }

    @Override
    public Set<String> storedVignetteIds(JobId jobId) {
        return delegate.storedVignetteIds(jobId);
    }

    @Override
    public boolean isComplete(Job job) {
        return delegate.isComplete(job);
    }

    @Override
    public Set<JobId> completedAmong(Collection<Job> jobs) {
        return delegate.completedAmong(jobs);
    }

    @Override
    public long recordCount() {
        return delegate.recordCount();
    }

    @Override
    public long duplicateCount() {
        return delegate.duplicateCount();
    }

    @Override
    public void forEachRecord(Consumer<StoredRecord> action) {
        delegate.forEachRecord(action);
    }

    @Override
    public void forEachFailure(Consumer<JobFailure> action) {
        delegate.forEachFailure(action);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
