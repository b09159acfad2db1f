package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.WorkerHandle;

import java.util.List;

/**
 * A limit on dispatches beyond each worker's capacity, consulted by the scheduler before it hands
 * a job to a worker: for example the fleet's concurrency against one model API
 * ({@link EndpointGovernor}).
 *
 * <p>Threads: {@link #onWorkers}, {@link #tryAcquire} and {@link #release} are called on the
 * scheduler's thread, the last two in pairs (every acquired dispatch is released once, when its
 * attempt is answered, whatever the answer). Implementations may be told things on other threads
 * and must then be thread-safe.
 */
public interface DispatchGate {
    /** No limit at all. */
    DispatchGate OPEN = new DispatchGate() {
        @Override
        public boolean tryAcquire(WorkerHandle worker) {
            return true;
        }

        @Override
        public void release(WorkerHandle worker, boolean succeeded) {
        }
    };

    /**
     * The workers the scheduler may dispatch to now, before a pass of {@link #tryAcquire} calls
     * (its latest {@link dev.panoptes.control.WorkerSource#snapshot()}; the same list instance
     * again while the workers have not changed). For gates whose limits depend on the fleet; the
     * default ignores it.
     */
    default void onWorkers(List<WorkerHandle> workers) {
    }

    /** May one more job go to {@code worker} now? A true must be followed by one {@link #release}. */
    boolean tryAcquire(WorkerHandle worker);

    /**
     * May {@code job} go to {@code worker} now? What the scheduler asks; a gate whose limit depends
     * on the job (a cost budget reserving the job's worst case) overrides it. A true must be
     * followed by one {@link #release}. The default asks {@link #tryAcquire(WorkerHandle)}.
     */
    default boolean tryAcquire(WorkerHandle worker, Job job) {
        return tryAcquire(worker);
    }

    /**
     * An attempt acquired for {@code worker} was answered.
     *
     * @param succeeded whether it answered with an outcome (rather than a failure)
     */
    void release(WorkerHandle worker, boolean succeeded);
}
