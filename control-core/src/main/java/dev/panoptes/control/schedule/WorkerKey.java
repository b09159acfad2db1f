package dev.panoptes.control.schedule;

import dev.panoptes.control.WorkerHandle;

/**
 * Who a worker is across its connections: its {@link WorkerHandle#id()} and the model API it calls
 * ({@link WorkerHandle#endpoint()}, null when unknown). A worker that reconnects is a new handle
 * with the same key, so what a run learned about it (its strikes, its quarantine, the jobs that
 * failed on it) still holds; two workers that share an id but call different model APIs are two
 * workers, since a misconfigured API is what quarantine is about.
 *
 * @param id       the worker's id
 * @param endpoint the model API it calls, or null
 */
record WorkerKey(String id, String endpoint) {
    /** The key of {@code worker}. */
    static WorkerKey of(WorkerHandle worker) {
        return new WorkerKey(worker.id(), worker.endpoint());
    }
}
