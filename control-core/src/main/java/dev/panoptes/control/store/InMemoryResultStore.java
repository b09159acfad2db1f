package dev.panoptes.control.store;

import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A {@link ResultStore} in memory, for tests and for runs whose results are consumed at once.
 * Thread-safe: every operation holds the store's lock, so each outcome is stored atomically.
 */
public final class InMemoryResultStore implements ResultStore {
    private final Clock clock;
    private final Object lock = new Object();
    /** Guarded by {@code lock}. */
    private final Map<JobId, Set<String>> storedByJob = new HashMap<>();
    /** Guarded by {@code lock}. */
    private final List<StoredRecord> records = new ArrayList<>();
    /** Guarded by {@code lock}. */
    private final Map<JobId, JobFailure> failures = new HashMap<>();
    /** Guarded by {@code lock}. */
    private long duplicates;

    /** A store stamping records with the system clock. */
    public InMemoryResultStore() {
        this(Clock.systemUTC());
    }

    /** A store stamping records with the given clock. */
    public InMemoryResultStore(Clock clock) {
        this.clock = clock;
    }

    @Override
    public Receipt record(JobOutcome outcome, String workerId) {
        Instant now = clock.instant();
        synchronized (lock) {
            Set<String> stored = storedByJob.computeIfAbsent(outcome.jobId(), id -> new HashSet<>());
            int added = 0;
            int dup = 0;
            for (ResponseRecord r : outcome.records()) {
                if (stored.add(r.vignetteId())) {
                    records.add(new StoredRecord(outcome.jobId(), r, workerId, now));
                    added++;
                } else {
                    dup++;
                }
            }
            duplicates += dup;
            failures.remove(outcome.jobId());
            return new Receipt(added, dup);
        }
    }

    @Override
    public void recordFailure(JobId jobId, String reason, int attempts) {
        Instant now = clock.instant();
        synchronized (lock) {
            failures.put(jobId, new JobFailure(jobId, reason, attempts, now));
        }
    }

    @Override
    public Set<String> storedVignetteIds(JobId jobId) {
        synchronized (lock) {
            Set<String> stored = storedByJob.get(jobId);
            return stored == null ? Set.of() : Set.copyOf(stored);
        }
    }

    @Override
    public long recordCount() {
        synchronized (lock) {
            return records.size();
        }
    }

    @Override
    public long duplicateCount() {
        synchronized (lock) {
            return duplicates;
        }
    }

    @Override
    public void forEachRecord(Consumer<StoredRecord> action) {
        List<StoredRecord> copy;
        synchronized (lock) {
            copy = List.copyOf(records);
        }
        copy.forEach(action);
    }

    @Override
    public void forEachFailure(Consumer<JobFailure> action) {
        List<JobFailure> copy;
        synchronized (lock) {
            copy = List.copyOf(failures.values());
        }
        copy.forEach(action);
    }

    @Override
    public void close() {
        // Nothing to release.
    }
}
