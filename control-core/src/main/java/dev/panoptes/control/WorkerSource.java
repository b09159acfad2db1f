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

    /**
     * Registers a callback told what an answer spent when it reached the source after its attempt
     * had ended (the attempt timed out, or was cancelled): tokens paid for whose answer will never
     * be stored. It runs on whichever thread received the answer (a selector thread, for remote
     * workers) and must return quickly, without blocking. Sources that never see late answers
     * keep this default.
     */
    default void addLateSpendListener(LateSpendListener listener) {
    }

    /** Removes a callback added by {@link #addLateSpendListener}; unknown callbacks are ignored. */
    default void removeLateSpendListener(LateSpendListener listener) {
    }

    /** Told of an answer that came after its attempt had ended, and what its model calls spent. */
    @FunctionalInterface
    interface LateSpendListener {
        /**
         * @param job    the job the answer was for
         * @param worker the worker that answered it
         * @param usage  what the answer's model calls reported, more than zero tokens
         */
        void spentLate(Job job, WorkerHandle worker, Usage usage);
    }
}
