package dev.panoptes.coordinator;

import dev.panoptes.control.WorkerHandle;
import dev.panoptes.remote.SharedPool;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Names, once, each worker that joins serving none of the run's models (nor its judge model):
 * it gets no work, and its operator should know why rather than wonder.
 *
 * <p>Runs on the thread that changes the pool (a selector thread): it only looks at the new
 * members and hands a line to a non-blocking printer.
 */
final class ModelWatcher implements Runnable {
    private final SharedPool pool;
    private final List<String> models;
    private final String judgeModel;
    private final Consumer<String> say;
    /** Guarded by itself: the members already looked at. */
    private final Set<WorkerHandle> seen = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * @param judgeModel the judge's model, or null
     * @param say        prints a line without blocking
     */
    ModelWatcher(SharedPool pool, List<String> models, String judgeModel, Consumer<String> say) {
        this.pool = pool;
        this.models = List.copyOf(models);
        this.judgeModel = judgeModel;
        this.say = say;
    }

    @Override
    public void run() {
        for (WorkerHandle w : pool.snapshot()) {
            boolean fresh;
            synchronized (seen) {
                fresh = seen.add(w);
            }
            if (fresh && !servesAny(w)) {
                say.accept("worker " + w.id() + " serves none of this run's models ("
                        + String.join(", ", models) + (judgeModel == null ? "" : "; judge " + judgeModel)
                        + "): it " + (w.models().isEmpty() ? "named no models (an older worker, or one started"
                        + " without a model API check)" : "serves " + String.join(", ", w.models()))
                        + "; it gets no work");
            }
        }
    }

    private boolean servesAny(WorkerHandle w) {
        for (String m : models) {
            if (w.serves(m)) {
                return true;
            }
        }
        return judgeModel != null && w.serves(judgeModel);
    }
}
