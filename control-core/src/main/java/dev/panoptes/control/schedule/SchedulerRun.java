package dev.panoptes.control.schedule;

import dev.panoptes.control.Plural;
import dev.panoptes.control.AttemptTimeoutException;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * The state of one call to {@link Scheduler#run}: the jobs waiting, in flight and done, and the
 * decisions about each answer. Everything here is touched only by the calling thread; answers
 * arrive on the workers' threads, and what the store made of each write on the store writer's
 * ({@link StoreWriter}), and reach it as events through {@link #events}.
 */
final class SchedulerRun {
    private static final Logger log = LoggerFactory.getLogger(SchedulerRun.class);
    /** Refused dispatches of one job in a row that are retried at once; later ones wait a little. */
    private static final int REFUSALS_BEFORE_PAUSE = 3;
    private static final long REFUSAL_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final WorkerSource source;
    private final ResultStore store;
    private final SchedulerOptions options;
    private final ProgressListener listener;
    private final List<Job> jobs;
    private final Quarantine quarantine;
    private final WorkerWait workerWait;
    private final long jobTimeoutNanos;
    private final DispatchGate gate;
    /**
     * What happened on other threads, for this one to act on. Unbounded in type but bounded in
     * use: at most one answer per attempt in flight (each attempt's future completes once), one
     * wakeup for source changes however many come ({@link #wakeQueued}), and from the store's
     * writer at most two per write waiting (see {@link StoreWriter}), of which there are at most
     * {@link SchedulerOptions.StoreRetry#maxHeld()} plus the attempts in flight.
     */
    private final BlockingQueue<Runnable> events = new LinkedBlockingQueue<>();
    /** True while a wakeup is queued and not yet run. Any thread. */
    private final AtomicBoolean wakeQueued = new AtomicBoolean();
    private final Runnable wake = this::queueWake;
    private final ArrayDeque<JobState> ready = new ArrayDeque<>();
    private final PriorityQueue<JobState> delayed = new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));
    /**
     * Attempts in deadline order. The timeout is the same for all, so dispatch order is deadline
     * order and a deque does; answered attempts leave from the head as they reach it.
     */
    private final ArrayDeque<JobState.Attempt> deadlines = new ArrayDeque<>();
    private final Map<WorkerHandle, int[]> inFlight = new IdentityHashMap<>();
    private final List<RunReport.FailedJob> failed = new ArrayList<>();
    private final Map<String, Integer> completedByWorker = new HashMap<>();
    /** Writes answers and failures to the store, on a thread of its own; made with the first. */
    private StoreWriter writer;
    /** A stepped run writes on its own thread, within each step: see {@link #writeInline()}. */
    private boolean inlineWrites;
    /** The run's clock, in {@link System#nanoTime()} units: the system's, or a test's. */
    private final LongSupplier clock;
    private final long startNanos;
    private int outstanding;
    private int inFlightTotal;
    private int completed;
    private int skipped;
    private long dispatches;
    private long redeliveries;
    private long duplicates;
    private int cursor;

    SchedulerRun(WorkerSource source, ResultStore store, SchedulerOptions options, List<Job> jobs,
                 LongSupplier clock) {
        this.clock = clock;
        this.startNanos = clock.getAsLong();
        this.source = source;
        this.store = store;
        this.options = options;
        this.listener = options.listener();
        this.jobs = jobs;
        this.quarantine = new Quarantine(options);
        this.workerWait = new WorkerWait(options);
        this.jobTimeoutNanos = options.jobTimeout().toNanos();
        this.gate = options.gate();
    }

    /** Runs the whole run on the calling thread, waiting for answers when there is nothing to do. */
    RunReport execute() throws InterruptedException {
        begin();
        try {
            while (outstanding > 0) {
                if (Thread.interrupted()) {
                    // Checked here, not only where the loop waits: a run that always has something
                    // to dispatch would otherwise never notice.
                    throw new InterruptedException("the run was interrupted with " + Plural.of(outstanding, "job")
                            + " not done");
                }
                long now = clock.getAsLong();
                if (advance(now)) {
                    continue;
                }
                if (giveUpWithoutWorkers(now)) {
                    break;
                }
                Runnable event = events.poll(waitNanos(now), TimeUnit.NANOSECONDS);
                if (event != null) {
                    event.run();
                }
            }
        } finally {
            end();
        }
        return report();
    }

    /**
     * Does everything that can be done at the clock's present time without waiting, then gives
     * up on the jobs left if the run has waited too long without a usable worker.
     *
     * @return true while jobs remain to be done
     */
    boolean step() {
        if (outstanding == 0) {
            return false;
        }
        long now = clock.getAsLong();
        do {
            while ((advance(now) || !events.isEmpty()) && outstanding > 0) {
                // Again at the same instant: an answer handled may free a slot for a ready job.
            }
        } while (outstanding > 0 && writer != null && writer.writeQueuedHere());
        return outstanding > 0 && !giveUpWithoutWorkers(now);
    }

    /**
     * Makes this run do its store writes on the stepping thread, at a fixed point of each
     * {@link #step()}, rather than on a writer thread whose timing would decide the order of
     * later steps. Before the run starts.
     */
    void writeInline() {
        inlineWrites = true;
    }

    /** The jobs neither stored nor failed for good yet. */
    int outstanding() {
        return outstanding;
    }

    /** Reads what is done already and queues the rest; listens to the source from then on. */
    void begin() {
        Set<JobId> complete = options.skipCompleted() && !jobs.isEmpty() ? store.completedAmong(jobs) : Set.of();
        for (Job job : jobs) {
            if (complete.contains(job.id())) {
                skipped++;
            } else {
                ready.add(new JobState(job));
            }
        }
        outstanding = ready.size();
        log.info("run of {} starting ({} already complete, {} to run)", Plural.of(jobs.size(), "job"), skipped,
                outstanding);
        listener.onStart(outstanding, skipped);
        source.addListener(wake);
    }

    /** Stops listening to the source. */
    void end() {
        source.removeListener(wake);
    }

    /** What the run did, so far or in the end. */
    RunReport report() {
        Duration elapsed = Duration.ofNanos(clock.getAsLong() - startNanos);
        RunReport report = new RunReport(jobs.size(), skipped, completed, failed, dispatches, redeliveries,
                duplicates, completedByWorker, elapsed, quarantine.report());
        log.info("run finished in {} ms: {} completed, {} skipped, {} failed, {} redeliveries, {} duplicates",
                elapsed.toMillis(), completed, skipped, failed.size(), redeliveries, duplicates);
        return report;
    }

    /**
     * One round of the loop without waiting: answers that arrived, deadlines, quarantines and
     * dispatch.
     *
     * @return true when it dispatched something or finished the run, so that the caller goes round
     *         again before waiting
     */
    private boolean advance(long now) {
        runEvents();
        checkSource();
        promoteDue(now);
        expireDeadlines(now);
        releaseQuarantines(now);
        return dispatchReady() > 0 || outstanding == 0;
    }

    /**
     * The source changed: wakes this run's thread, with one event for a whole burst of changes
     * (thousands of workers registering at once). Any thread.
     */
    private void queueWake() {
        if (wakeQueued.compareAndSet(false, true)) {
            // Cleared before the loop goes on to a fresh snapshot: a change after the clear
            // queues a new wakeup, one before it is in that snapshot.
            events.add(() -> wakeQueued.set(false));
        }
    }

    /** Events queued and not yet run; for tests. Any thread. */
    int queuedEvents() {
        return events.size();
    }

    private void runEvents() {
        Runnable event;
        while ((event = events.poll()) != null) {
            event.run();
        }
    }

    private void checkSource() {
        Throwable failure = source.failure();
        if (failure != null) {
            throw new WorkerSourceFailedException("the run stopped with " + Plural.of(outstanding, "job")
                    + " not done ("
                    + inFlightTotal + " in flight, abandoned): its worker source failed: "
                    + (failure.getMessage() == null ? failure.toString() : failure.getMessage())
                    + "; what was stored is kept, and running the same jobs again resumes", failure);
        }
    }

    private void promoteDue(long now) {
        while (!delayed.isEmpty() && delayed.peek().dueNanos - now <= 0) {
            ready.add(delayed.poll());
        }
    }

    /** Cancels every attempt past its deadline; its answer (the cancellation) arrives as an event. */
    private void expireDeadlines(long now) {
        JobState.Attempt a;
        while ((a = deadlines.peekFirst()) != null && (a.answered || a.deadlineNanos - now <= 0)) {
            deadlines.pollFirst();
            if (!a.answered) {
                a.timedOut = true;
                // Completes the future (unless the answer won the race), which queues onAnswer.
                a.reply.cancel(true);
            }
        }
    }

    private void releaseQuarantines(long now) {
        for (WorkerHandle w : quarantine.releaseDue(now)) {
            log.info("worker={} - quarantine over; on probation: one job at a time until one succeeds", w.id());
            listener.onProbation(w);
        }
    }

    private long waitNanos(long now) {
        long wait = options.pollInterval().toNanos();
        if (!delayed.isEmpty()) {
            wait = Math.min(wait, Math.max(0, delayed.peek().dueNanos - now));
        }
        JobState.Attempt oldest = deadlines.peekFirst();
        if (oldest != null) {
            wait = Math.min(wait, Math.max(0, oldest.deadlineNanos - now));
        }
        wait = Math.min(wait, quarantine.nanosToNextRelease(now));
        wait = Math.min(wait, workerWait.nanosToLimit(now));
        return Math.max(wait, 1);
    }

    /**
     * Dispatches ready jobs while some worker has a free slot, unless the store is down or has
     * too many answers waiting for it (they would only pile up). @return jobs dispatched
     */
    private int dispatchReady() {
        if (ready.isEmpty() || writer != null && !writer.accepting()) {
            return 0;
        }
        List<WorkerHandle> workers = source.snapshot();
        gate.onWorkers(workers);
        int n = workers.size();
        if (n == 0) {
            return 0;
        }
        int[] free = new int[n];
        int freeTotal = 0;
        for (int i = 0; i < n; i++) {
            WorkerHandle w = workers.get(i);
            int[] busy = inFlight.get(w);
            free[i] = Math.max(0, quarantine.slotLimit(w) - (busy == null ? 0 : busy[0]) - w.unavailableSlots());
            freeTotal += free[i];
        }
        int dispatched = 0;
        for (Iterator<JobState> it = ready.iterator(); it.hasNext() && freeTotal > 0; ) {
            JobState state = it.next();
            int chosen;
            // A worker the gate holds back (its model API is at the fleet's limit) counts as full for
            // this pass; the job may still go to a worker behind another API.
            while ((chosen = choose(state, workers, free)) >= 0 && !gate.tryAcquire(workers.get(chosen))) {
                freeTotal -= free[chosen];
                free[chosen] = 0;
            }
            if (chosen < 0) {
                continue;
            }
            it.remove();
            free[chosen]--;
            freeTotal--;
            dispatch(state, workers.get(chosen));
            dispatched++;
        }
        return dispatched;
    }

    /**
     * The next worker with a free slot in round-robin order, preferring one this job has not
     * failed on. Returns -1 when the only free workers are ones it failed on while an untried
     * worker that is not quarantined exists (busy now): the job waits for that one.
     */
    private int choose(JobState state, List<WorkerHandle> workers, int[] free) {
        int n = workers.size();
        int fallback = -1;
        boolean untriedExists = false;
        String model = state.job.model();
        for (int k = 0; k < n; k++) {
            int i = Math.floorMod(cursor + k, n);
            WorkerHandle w = workers.get(i);
            if (!w.serves(model)) {
                continue;
            }
            boolean tried = state.failedOn.contains(w);
            untriedExists |= !tried && !quarantine.isQuarantined(w);
            if (free[i] == 0) {
                continue;
            }
            if (!tried) {
                cursor = i + 1;
                return i;
            }
            if (fallback < 0) {
                fallback = i;
            }
        }
        if (fallback >= 0 && !untriedExists) {
            cursor = fallback + 1;
            return fallback;
        }
        return -1;
    }

    private void dispatch(JobState state, WorkerHandle worker) {
        state.dispatches++;
        state.attempts++;
        dispatches++;
        if (state.dispatches > 1) {
            redeliveries++;
        }
        inFlight.computeIfAbsent(worker, w -> new int[1])[0]++;
        inFlightTotal++;
        log.debug("worker={} job={} - dispatching, attempt {}", worker.id(), state.job.id(), state.attempts);
        listener.onDispatched(state.job, worker, state.attempts);
        JobState.Attempt attempt = new JobState.Attempt(state, worker, clock.getAsLong() + jobTimeoutNanos);
        CompletableFuture<JobOutcome> reply;
        try {
            reply = worker.dispatch(state.job);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(new DispatchRefusedException(
                    "dispatch of job " + state.job.id() + " to worker " + worker.id() + " failed: " + e, e));
        }
        attempt.reply = reply;
        if (jobTimeoutNanos > 0) {
            deadlines.addLast(attempt);
        }
        reply.whenComplete((outcome, error) -> events.add(() -> onAnswer(attempt, outcome, error)));
    }

    private void onAnswer(JobState.Attempt attempt, JobOutcome outcome, Throwable error) {
        attempt.answered = true;
        JobState state = attempt.state;
        WorkerHandle worker = attempt.worker;
        int[] busy = inFlight.get(worker);
        if (--busy[0] == 0) {
            inFlight.remove(worker);
        }
        inFlightTotal--;
        if (error == null) {
            try {
                outcome.requireAnswers(state.job);
            } catch (IllegalArgumentException e) {
                error = new WorkerException("worker " + worker.id() + " gave a wrong answer: " + e.getMessage());
            }
        }
        gate.release(worker, error == null);
        if (error == null) {
            onCompleted(state, worker, outcome);
            return;
        }
        Throwable cause = unwrap(error);
        if (attempt.timedOut && cause instanceof CancellationException) {
            cause = new AttemptTimeoutException("job " + state.job.id() + " was not answered by worker " + worker.id()
                    + " within its deadline of " + options.jobTimeout().toMillis() + " ms (attempt " + state.attempts
                    + "); asked the worker to stop it");
        }
        String reason = String.valueOf(cause.getMessage() == null ? cause : cause.getMessage());
        if (cause instanceof DispatchRefusedException) {
            // It never reached the worker: nothing happened that should cost the job an attempt.
            state.attempts--;
            state.failedOn.add(worker);
            if (++state.refusalsInARow <= REFUSALS_BEFORE_PAUSE) {
                retryNow(state, worker, cause, reason);
            } else {
                // A handle that refuses everything and stays in the source (a local worker closed
                // but not removed, say) must not make the run spin: pause the job a little.
                state.dueNanos = clock.getAsLong() + REFUSAL_PAUSE_NANOS;
                delayed.add(state);
                listener.onRetry(state.job, worker, cause, state.attempts, Duration.ofNanos(REFUSAL_PAUSE_NANOS));
            }
            return;
        }
        state.refusalsInARow = 0;
        FailureScope scope = cause instanceof ControlException ce ? ce.scope() : FailureScope.TRANSIENT;
        switch (scope) {
            case JOB:
                quarantine.onJobFailure(worker);
                fail(state, reason);
                return;
            case WORKER:
                strike(worker, reason);
                state.workerFaults++;
                state.failedOn.add(worker);
                if (state.workerFaults <= options.maxWorkerFaults()) {
                    state.attempts--;
                    retryNow(state, worker, cause, reason);
                    return;
                }
                reason = reason + " (the job's " + state.workerFaults + "th worker-scoped failure; beyond "
                        + options.maxWorkerFaults() + " they count as attempts)";
                break;
            default:
                if (cause instanceof AttemptTimeoutException) {
                    strike(worker, reason);
                }
                break;
        }
        retryCounted(state, worker, cause, reason);
    }

    private void onCompleted(JobState state, WorkerHandle worker, JobOutcome outcome) {
        quarantine.onSuccess(worker);
        // The job is done once its answer is stored (onStored): the store may be slow, or down
        // for a while, and the answer waits for it in the writer.
        writer().submit(new StoreWriter.RecordWrite(state, worker, outcome));
    }

    /** A job's answer is stored: it is done. */
    private void onStored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
        JobState state = write.state();
        WorkerHandle worker = write.worker();
        duplicates += receipt.duplicates();
        completed++;
        completedByWorker.merge(worker.id(), 1, Integer::sum);
        outstanding--;
        log.debug("worker={} job={} - completed ({} stored, {} duplicates)", worker.id(), state.job.id(),
                receipt.stored(), receipt.duplicates());
        listener.onCompleted(state.job, worker, write.outcome(), receipt);
    }

    /**
     * The store refused a write for what it holds. An answer it cannot keep is its job's own
     * failure (another attempt would most likely give one like it); a failure it cannot keep is
     * only logged, the job being failed already.
     */
    private void onRefused(StoreWriter.Write write, RecordRejectedException error) {
        if (write instanceof StoreWriter.RecordWrite r) {
            fail(r.state(), "the result store refused the answer of worker " + r.worker().id() + ": "
                    + error.getMessage());
            return;
        }
        outstanding--;
        log.warn("job={} - failed, but the result store refused to record its failure: {}", write.state().job.id(),
                error.getMessage());
    }

    /** The writer gave up on the store: the run stops, keeping what was stored. */
    private void onStoreLost(Throwable error, Duration outage, int held, boolean permanent) {
        String cause = error.getMessage() == null ? error.toString() : error.getMessage();
        throw new StoreUnavailableException("the run stopped with " + Plural.of(outstanding, "job") + " not done: "
                + (permanent ? "writing to the result store failed in a way retrying cannot mend: " + cause
                        : "the result store took no write for " + describe(outage) + " (the limit is "
                        + describe(options.storeRetry().maxOutage()) + "); last error: " + cause)
                + "; the " + Plural.of(completed, "job") + " stored in this run " + (completed == 1 ? "is" : "are")
                + " kept, the "
                + Plural.of(held, "answer or failure", "answers and failures")
                + " waiting for the store " + (held == 1 ? "is" : "are")
                + " not, and running the same jobs again resumes", error);
    }

    private static String describe(Duration d) {
        return d.compareTo(Duration.ofSeconds(10)) < 0 ? d.toMillis() + " ms" : d.toSeconds() + " s";
    }

    /** The store's writer, started with the run's first write. */
    private StoreWriter writer() {
        if (writer == null) {
            writer = new StoreWriter(store, options.storeRetry(), events::add, writerOutcomes(), inlineWrites);
        }
        return writer;
    }

    private StoreWriter.Outcomes writerOutcomes() {
        return new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
                onStored(write, receipt);
            }

            @Override
            public void failureStored(StoreWriter.FailureWrite write) {
                outstanding--;
            }

            @Override
            public void refused(StoreWriter.Write write, RecordRejectedException error) {
                onRefused(write, error);
            }

            @Override
            public void down(String error, int held) {
                listener.onStoreDown(error, held);
            }

            @Override
            public void back(Duration outage, int held) {
                listener.onStoreBack(outage, held);
            }

            @Override
            public void lost(Throwable error, Duration outage, int held, boolean permanent) {
                onStoreLost(error, outage, held, permanent);
            }
        };
    }

    /**
     * After {@link #execute()} returned: waits until the store has taken every write still
     * waiting (failures recorded as the run gave up, say), running their events, and returns the
     * report with what they changed.
     *
     * @throws StoreUnavailableException when the store stays down past its limit meanwhile
     * @throws InterruptedException      when the thread is interrupted while waiting
     */
    RunReport finish(RunReport report) throws InterruptedException {
        if (writer == null) {
            return report;
        }
        writer.finish();
        long poll = options.pollInterval().toNanos();
        // The writer posts its last event before it stops working: once it is not working, every
        // event of it is queued.
        while (writer.working() || !events.isEmpty()) {
            Runnable event = events.poll(poll, TimeUnit.NANOSECONDS);
            if (event != null) {
                event.run();
            }
        }
        if (completed == report.completed() && duplicates == report.duplicates()
                && failed.size() == report.failed().size()) {
            return report;
        }
        return new RunReport(report.totalJobs(), report.skipped(), completed, failed, report.attempts(),
                report.redeliveries(), duplicates, completedByWorker, report.elapsed(), report.quarantined());
    }

    /** Stops the store's writer, however the run ended; what still waits for the store is lost (logged). */
    void abandon() {
        if (writer != null) {
            writer.abandon();
        }
    }

    /** Sends the job again at once, to another worker when there is one, without spending an attempt. */
    private void retryNow(JobState state, WorkerHandle worker, Throwable cause, String reason) {
        ready.addFirst(state);
        log.debug("worker={} job={} - not counted as an attempt, sending again now: {}", worker.id(), state.job.id(),
                reason);
        listener.onRetry(state.job, worker, cause, state.attempts, Duration.ZERO);
    }

    /** A failure that spends an attempt: sent again after the backoff, or final at the limit. */
    private void retryCounted(JobState state, WorkerHandle worker, Throwable cause, String reason) {
        if (state.attempts >= options.maxAttempts()) {
            fail(state, "gave up after " + Plural.of(state.attempts, "attempt") + "; last failure: " + reason);
            return;
        }
        state.failedOn.add(worker);
        Duration delay = backoff(state.attempts);
        state.dueNanos = clock.getAsLong() + delay.toNanos();
        if (delay.isZero()) {
            ready.addFirst(state);
        } else {
            delayed.add(state);
        }
        log.info("worker={} job={} - attempt {} failed retryably, sending again in {} ms: {}", worker.id(),
                state.job.id(), state.attempts, delay.toMillis(), reason);
        listener.onRetry(state.job, worker, cause, state.attempts, delay);
    }

    /** Charges a failure to the worker itself; enough of them in a row quarantine it. */
    private void strike(WorkerHandle worker, String reason) {
        Quarantine.Verdict verdict = quarantine.strike(worker, reason, clock.getAsLong());
        if (verdict.quarantined()) {
            log.info("worker={} - quarantined: {} {} its own, not its jobs' (last: {});"
                    + " no new jobs for {} s", worker.id(), Plural.of(verdict.strikes(), "failure"),
                    verdict.strikes() == 1 ? "was" : "in a row were", reason, verdict.duration().toSeconds());
            listener.onQuarantined(worker, reason, verdict.strikes(), verdict.duration());
        }
    }

    /** No delay before the first redelivery; then the configured backoff, doubling, capped. */
    private Duration backoff(int attemptsMade) {
        if (attemptsMade <= 1) {
            return Duration.ZERO;
        }
        long base = options.retryBackoff().toNanos();
        long cap = options.maxRetryBackoff().toNanos();
        int doublings = Math.min(attemptsMade - 2, 30);
        long delay = base > cap >> doublings ? cap : base << doublings;
        return Duration.ofNanos(Math.min(delay, cap));
    }

    private void fail(JobState state, String reason) {
        failed.add(new RunReport.FailedJob(state.job.id(), reason, state.attempts));
        // Done once recorded, as an answer is once stored.
        writer().submit(new StoreWriter.FailureWrite(state, reason, state.attempts));
        log.warn("job={} - failed after {}: {}", state.job.id(), Plural.of(state.attempts, "attempt"), reason);
        listener.onFailed(state.job, reason, state.attempts);
    }

    /**
     * True when the run has waited too long with work and no usable worker (none connected, or
     * all quarantined), after failing what remained.
     */
    private boolean giveUpWithoutWorkers(long now) {
        if (ready.isEmpty() || inFlightTotal > 0) {
            workerWait.notWaiting();
            return false;
        }
        List<WorkerHandle> workers = source.snapshot();
        Set<String> wanted = wantedModels();
        List<WorkerHandle> serving = new ArrayList<>();
        for (WorkerHandle w : workers) {
            if (servesAny(w, wanted)) {
                if (!quarantine.isQuarantined(w)) {
                    workerWait.notWaiting();
                    return false;
                }
                serving.add(w);
            }
        }
        String reason = workerWait.waiting(now, workers, serving, quarantine, outstanding, wanted);
        if (reason == null) {
            return false;
        }
        List<JobState> remaining = new ArrayList<>(ready);
        remaining.addAll(delayed);
        ready.clear();
        delayed.clear();
        for (JobState state : remaining) {
            fail(state, reason);
        }
        return true;
    }

    /** The models the jobs waiting to be sent ask for (null among them for "any"). */
    private Set<String> wantedModels() {
        Set<String> models = new LinkedHashSet<>();
        for (JobState state : ready) {
            models.add(state.job.model());
        }
        for (JobState state : delayed) {
            models.add(state.job.model());
        }
        return models;
    }

    private static boolean servesAny(WorkerHandle w, Set<String> models) {
        for (String m : models) {
            if (w.serves(m)) {
                return true;
            }
        }
        return false;
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
