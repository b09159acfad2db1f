package dev.panoptes.control;

import java.util.List;

/**
 * The live set of workers the scheduler may use. Workers may join and leave at any time; the
 * scheduler takes a fresh {@link #snapshot()} for every decision.
 *
 * <p>Implementations are thread-safe.
 */
public interface WorkerSource {
    /** The workers available now, as an immutable list; empty when there are none. */
    List<WorkerHandle> snapshot();

    /**
     * Registers a callback run after every change of membership, so that a waiting scheduler
     * wakes at once instead of polling. The callback runs on whichever thread made the change
     * and must return quickly. Sources that cannot notify keep this default, and the scheduler
     * falls back to polling.
     */
    default void addListener(Runnable onChange) {
    }

    /** Removes a callback added by {@link #addListener(Runnable)}; unknown callbacks are ignored. */
    default void removeListener(Runnable onChange) {
    }

    /**
     * Why this source can no longer supply workers (its network server died, say), or null while
     * it works. A scheduler stops its run when this becomes non-null, with a
     * {@link WorkerSourceFailedException}; listeners are told of the change. Null by default.
     */
    default Throwable failure() {
        return null;
    }
}
