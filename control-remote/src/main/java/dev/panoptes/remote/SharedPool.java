package dev.panoptes.remote;

import dev.panoptes.control.WorkerSet;

/**
 * The coordinator's live set of workers: a {@link WorkerServer} adds each {@link RemoteWorker}
 * when it registers and removes exactly that worker when its connection ends or it drains.
 * A scheduler reads it through {@link #snapshot()} like any other
 * {@link dev.panoptes.control.WorkerSource}, and cannot tell it from a local pool.
 *
 * <p>Membership is by identity, so two connections registering the same worker id are two
 * members, and the end of one leaves the other in place. Local workers may be added too.
 *
 * <p>Thread-safe: any thread may call any method. Change listeners run on the thread that
 * made the change, which for remote workers is a selector thread: they must return quickly.
 */
public final class SharedPool extends WorkerSet {
    /** An empty pool. */
    public SharedPool() {
    }
}
