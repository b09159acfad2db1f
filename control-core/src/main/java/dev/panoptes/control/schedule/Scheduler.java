package dev.panoptes.control.schedule;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.store.ResultStore;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Runs a list of jobs over a {@link WorkerSource} until each is stored or has failed for good.
 *
 * <ul>
 *   <li><b>Work-conserving.</b> Every decision takes a fresh {@link WorkerSource#snapshot()}; a
 *       job goes to any worker with a free slot (its capacity minus the jobs this run has in
 *       flight on it and its {@link WorkerHandle#unavailableSlots()}), round-robin, so a job
 *       never waits behind a busy worker while another has room. Fast workers free their slots
 *       sooner and so take more jobs.</li>
 *   <li><b>Failure has an owner</b> ({@link ControlException#scope()}). A job's own failure
 *       ({@link FailureScope#JOB}) is final at once. A transient one is retried, to a worker the
 *       job has not failed on when there is one, up to {@link SchedulerOptions#maxAttempts()};
 *       the first redelivery is immediate (a lost connection says nothing about the job), later
 *       ones back off exponentially. A worker's own failure ({@link FailureScope#WORKER}) sends
 *       the job to another worker at once without spending an attempt (up to
 *       {@link SchedulerOptions#maxWorkerFaults()} per job), and neither does a dispatch that
 *       never reached its worker ({@link DispatchRefusedException}).</li>
 *   <li><b>Deadlines.</b> An attempt not answered within {@link SchedulerOptions#jobTimeout()}
 *       fails retryably; its future is cancelled, which asks the worker to stop the job.</li>
 *   <li><b>Quarantine.</b> A worker whose own failures (worker-scoped, or deadlines passed)
 *       come {@link SchedulerOptions#quarantineAfter()} times in a row gets no new jobs for a
 *       while, longer each time in a row; then one job at a time until one succeeds.</li>
 *   <li><b>Waiting.</b> With work and no usable worker (none connected, or all quarantined), the
 *       run waits (woken by the source's change listener, or polling) for up to
 *       {@link SchedulerOptions#waitForWorkers()}, then fails what remains.</li>
 *   <li><b>Storing.</b> Each outcome goes to the {@link ResultStore}, which ignores records it
 *       has (at-least-once delivery, stored once); each final failure is recorded there too. The
 *       writes happen on a thread of their own, in order ({@link StoreWriter}); a job is done
 *       once its outcome is stored. A write that fails is retried with backoff
 *       ({@link SchedulerOptions#storeRetry()}); meanwhile no new job is sent and answers wait
 *       in memory, and the run stops ({@link StoreUnavailableException}) only when the store
 *       has taken no write for its limit. An answer the store refuses for what it holds
 *       ({@link dev.panoptes.control.store.RecordRejectedException}) is its job's failure.
 *       With {@link SchedulerOptions#skipCompleted()}, jobs already complete are not sent.</li>
 * </ul>
 *
 * <p>All decisions are made under the run's turn: on the thread that calls {@link #run}, or on a
 * thread that delivers answers as a {@linkplain dev.panoptes.control.HandOffBatch#openHost() host}
 * while the caller waits (a selector thread completing its futures directly decides and
 * dispatches there, never waiting for the turn); other answers are handed to the caller's
 * thread through a queue. The caller's thread keeps the timers. One run at a time per instance. One
 * run's loop lives in {@link SchedulerRun}, which drives {@link WaitingJobs}, {@link Dispatcher},
 * {@link Retries} and {@link RunLedger}; quarantines live in {@link Quarantine}.
 */
public final class Scheduler {
    private final WorkerSource source;
    private final ResultStore store;
    private final SchedulerOptions options;

    /** A scheduler over the given workers and store. */
    public Scheduler(WorkerSource source, ResultStore store, SchedulerOptions options) {
        this.source = Objects.requireNonNull(source, "source");
        this.store = Objects.requireNonNull(store, "store");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Runs every job to completion or final failure and returns what happened. Blocks the
     * calling thread for the whole run.
     *
     * @throws IllegalArgumentException when two jobs share an id (nothing is dispatched then)
     * @throws InterruptedException     when the calling thread is interrupted; what was stored
     *                                  stays stored (answers waiting for a store that works get a
     *                                  moment to be stored), jobs in flight are abandoned
     * @throws dev.panoptes.control.store.StoreException when the store cannot be read at the start
     *                                  (nothing was dispatched)
     * @throws StoreUnavailableException when the store took no write for
     *                                  {@link SchedulerOptions.StoreRetry#maxOutage()} (or failed in
     *                                  a way retrying cannot mend); what was stored stays stored,
     *                                  answers still waiting for it are lost, jobs in flight abandoned
     * @throws WorkerSourceFailedException when the worker source fails for good during the run;
     *                                  what was stored stays stored, nothing is recorded failed
     */
    public RunReport run(List<Job> jobs) throws InterruptedException {
        requireUniqueIds(jobs);
        SchedulerRun run = new SchedulerRun(source, store, options, jobs, System::nanoTime);
        try {
            return run.finish(run.execute());
        } finally {
            run.abandon();
        }
    }

    /**
     * Starts a run that the caller drives itself, one {@link SteppedRun#step()} at a time, on a
     * clock of its own: the same decisions as {@link #run}, made only when asked and never
     * waiting. For simulations and deterministic tests, which interleave the steps with the
     * workers' events in an order they choose.
     *
     * @param nanoClock the run's time in {@link System#nanoTime()} units; read on the driving
     *                  thread only, and never going backwards
     * @throws IllegalArgumentException when two jobs share an id (nothing is dispatched then)
     * @throws dev.panoptes.control.store.StoreException when the store cannot say which jobs are
     *                                  complete already
     */
    public SteppedRun start(List<Job> jobs, LongSupplier nanoClock) {
        requireUniqueIds(jobs);
        SchedulerRun run = new SchedulerRun(source, store, options, List.copyOf(jobs),
                Objects.requireNonNull(nanoClock, "nanoClock"));
        run.writeInline();
        run.begin();
        return new SteppedRun(run);
    }

    private static void requireUniqueIds(List<Job> jobs) {
        // Sized for every id at once: growing it a million times over made garbage at each doubling.
        Set<JobId> ids = new HashSet<>(Math.max(16, (int) Math.min(Integer.MAX_VALUE / 2, jobs.size() * 4L / 3 + 1)));
        for (Job job : jobs) {
            if (!ids.add(job.id())) {
                throw new IllegalArgumentException("job id " + job.id() + " appears more than once in this run; "
                        + "job ids must be unique because results are stored under them");
            }
        }
    }
}

