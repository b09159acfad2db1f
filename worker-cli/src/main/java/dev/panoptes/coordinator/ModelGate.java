package dev.panoptes.coordinator;

/**
 * Whether a run may ask its models now, asked once the response cache has served what it holds
 * and only when some answers are left to ask: a run whose every answer the cache holds needs no
 * model, so a model API that is down does not stop it ({@link CoordinatorRun#withModelGate}).
 *
 * <p>Called on the run's thread; may block for as long as a check of the model API takes.
 */
@FunctionalInterface
public interface ModelGate {
    /**
     * Null when the models may be asked; else one line saying why not and what to do, which the
     * run prints before it stops (exit {@link CoordinatorRun#EXIT_MODEL_API_UNUSABLE}).
     *
     * @throws InterruptedException when the thread is interrupted while it checks
     */
    String refusal() throws InterruptedException;
}
