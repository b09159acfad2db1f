package dev.panoptes.bench.cluster;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link WorkerSource} that passes a pool through unchanged except that it notes, for every
 * dispatch, the {@link System#nanoTime()} at which its future completed or failed: the moment the
 * coordinator's network side gave up on a job, before the scheduler's thread hears of it.
 *
 * <p>Each underlying worker is always wrapped by the same handle, so the scheduler's per-worker
 * bookkeeping (by identity) is unaffected. Thread-safe.
 */
final class TimedSource implements WorkerSource {
    /** When a dispatch ended, and how. */
    record Ended(long nanos, String workerId, boolean failed) {
    }

    private final WorkerSource pool;
    private final Map<WorkerHandle, WorkerHandle> wrappers = new ConcurrentHashMap<>();
    private final Map<JobId, List<Ended>> ended = new ConcurrentHashMap<>();

    TimedSource(WorkerSource pool) {
        this.pool = pool;
    }

    @Override
    public List<WorkerHandle> snapshot() {
        List<WorkerHandle> workers = pool.snapshot();
        List<WorkerHandle> out = new ArrayList<>(workers.size());
        for (WorkerHandle w : workers) {
            out.add(wrappers.computeIfAbsent(w, Timed::new));
        }
        return List.copyOf(out);
    }

    @Override
    public void addListener(Runnable onChange) {
        pool.addListener(onChange);
    }

    @Override
    public void removeListener(Runnable onChange) {
        pool.removeListener(onChange);
    }

    /** Every dispatch end noted for a job, in order. */
    List<Ended> endsOf(JobId job) {
        return ended.getOrDefault(job, List.of());
    }

    /** Forgets what was noted. */
    void clear() {
        ended.clear();
    }

    private final class Timed implements WorkerHandle {
        private final WorkerHandle worker;

        Timed(WorkerHandle worker) {
            this.worker = worker;
        }

        @Override
        public String id() {
            return worker.id();
        }

        @Override
        public int capacity() {
            return worker.capacity();
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            CompletableFuture<JobOutcome> reply = worker.dispatch(job);
            reply.whenComplete((outcome, error) -> ended.computeIfAbsent(job.id(), id -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(new Ended(System.nanoTime(), worker.id(), error != null)));
            return reply;
        }

        @Override
        public String toString() {
            return worker.toString();
        }
    }
}
