package dev.panoptes.coordinator;

import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Ends a run whose only worker can be the one in this process ({@code eval}) once that worker
 * cannot come back: at the first job it fails when it says it refuses for good (a model API
 * without prompt log-probabilities: no quarantine, no probation is waited out, since neither can
 * change that), else when it is quarantined again without a job done in between (the probation
 * the scheduler gives it failed). A coordinator waits for workers
 * instead: another may connect. Ends the run by failing the worker set with a
 * {@link SoleWorkerQuarantinedException}, which stops the scheduler keeping what was stored.
 *
 * <p>Told of events on the scheduler's thread; the fields are volatile only so that a listener
 * called from elsewhere still sees them.
 */
final class SoleWorkerQuarantine implements ProgressListener {
    private final WorkerSet pool;
    private final WorkerHandle worker;
    private final Supplier<String> forGood;
    /** Whether the worker was quarantined since its last job done. */
    private volatile boolean quarantinedBefore;
    /** Whether the run was ended already: the jobs the worker held still fail, and need not say so again. */
    private volatile boolean ended;

    /**
     * @param pool    the run's workers, failed to end the run
     * @param worker  the run's only worker
     * @param forGood why the worker refuses jobs for good, or null while nothing says so
     */
    SoleWorkerQuarantine(WorkerSet pool, WorkerHandle worker, Supplier<String> forGood) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.forGood = Objects.requireNonNull(forGood, "forGood");
    }

    @Override
    public void onCompleted(Job job, WorkerHandle by, JobOutcome outcome, ResultStore.Receipt receipt) {
        if (by == worker) {
            quarantinedBefore = false;
        }
    }

    @Override
    public void onRetry(Job job, WorkerHandle by, Throwable cause, int attempt, Duration delay) {
        if (by == worker) {
            endIfForGood();
        }
    }

    @Override
    public void onQuarantined(WorkerHandle by, String reason, int failuresInARow, Duration duration) {
        if (by != worker || endIfForGood()) {
            return;
        }
        if (quarantinedBefore) {
            end(new SoleWorkerQuarantinedException(worker.id(), reason, true));
        } else {
            quarantinedBefore = true;
        }
    }

    /** Ends the run when the worker says it refuses for good; whether it does. */
    private boolean endIfForGood() {
        String permanent = forGood.get();
        if (permanent == null) {
            return false;
        }
        end(new SoleWorkerQuarantinedException(worker.id(), permanent, false));
        return true;
    }

    private void end(SoleWorkerQuarantinedException why) {
        if (!ended) {
            ended = true;
            pool.fail(why);
        }
    }
}
