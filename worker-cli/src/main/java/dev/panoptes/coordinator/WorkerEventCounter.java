package dev.panoptes.coordinator;

import dev.panoptes.control.Job;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.JdbcResultStore;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Counts each worker's failed attempts and quarantines during a run, for the report's worker
 * table; {@link #storeIn} adds them to the database (so a resumed run adds to its first part).
 *
 * <p>The listener methods run on the scheduler's thread; {@link #storeIn} on the run's, after the
 * scheduler returned. The maps are guarded by this.
 */
final class WorkerEventCounter implements ProgressListener {
    private final Map<String, long[]> counts = new HashMap<>();

    @Override
    public synchronized void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        counts.computeIfAbsent(worker.id(), id -> new long[2])[0]++;
    }

    @Override
    public synchronized void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
        counts.computeIfAbsent(worker.id(), id -> new long[2])[1]++;
    }

    /** Adds what was counted to the store under {@code runId}, and starts counting afresh. */
    synchronized void storeIn(JdbcResultStore store, String runId) {
        for (String workerId : new TreeSet<>(counts.keySet())) {
            long[] c = counts.get(workerId);
            store.addWorkerEvents(runId, workerId, c[0], c[1]);
        }
        counts.clear();
    }
}
