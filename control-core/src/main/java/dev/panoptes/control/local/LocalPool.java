package dev.panoptes.control.local;

import dev.panoptes.control.JobRunner;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;

/**
 * A {@link dev.panoptes.control.WorkerSource} of in-process workers. Workers may be added and
 * removed while a scheduler runs over it. Closing the pool closes every {@link LocalWorker}
 * still in it.
 *
 * <p>Thread-safe.
 */
public final class LocalPool extends WorkerSet implements AutoCloseable {
    /** Creates, adds and returns a new local worker. */
    public LocalWorker start(String id, int capacity, JobRunner runner) {
        LocalWorker worker = new LocalWorker(id, capacity, runner);
        add(worker);
        return worker;
    }

    /** Closes every local worker in the pool; their unfinished jobs fail retryably. */
    @Override
    public void close() {
        for (WorkerHandle w : snapshot()) {
            remove(w);
            if (w instanceof LocalWorker local) {
                local.close();
            }
        }
    }
}
