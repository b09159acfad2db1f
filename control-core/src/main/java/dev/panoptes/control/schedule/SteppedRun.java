package dev.panoptes.control.schedule;

/**
 * A run of {@link Scheduler} driven by its caller: each {@link #step()} makes every decision
 * that is due at the run's clock (answers that arrived, deadlines, quarantines, dispatch) and
 * returns without waiting. Made by {@link Scheduler#start}.
 *
 * <p>Its store writes happen within the step too, after the decisions (retried as
 * {@link SchedulerOptions#storeRetry()} says, the step waiting meanwhile), so that what a step
 * does never depends on when another thread gets round to something.
 *
 * <p><b>Threads.</b> One thread at a time drives it; the workers' answers may arrive on any
 * thread and wait, queued, for the next step.
 */
public final class SteppedRun {
    private final SchedulerRun run;
    private boolean finished;

    SteppedRun(SchedulerRun run) {
        this.run = run;
    }

    /**
     * Makes every decision due now.
     *
     * @return true while jobs remain neither stored nor failed for good; false once every job
     *         ended, or the run gave up waiting for a usable worker (the jobs left are failed)
     * @throws IllegalStateException when called after {@link #finish()}
     * @throws dev.panoptes.control.store.StoreException when the store fails
     * @throws dev.panoptes.control.WorkerSourceFailedException when the worker source failed
     */
    public boolean step() {
        if (finished) {
            throw new IllegalStateException("this run was finished already");
        }
        return run.step();
    }

    /** Jobs neither stored nor failed for good yet. */
    public int outstanding() {
        return run.outstanding();
    }

    /**
     * Ends the run where it is (jobs still in flight are abandoned: nothing more is done with
     * their answers) and reports what happened. Idempotent in effect; each call reports anew.
     */
    public RunReport finish() {
        if (!finished) {
            finished = true;
            run.end();
            run.abandon();
        }
        return run.report();
    }
}
