package dev.panoptes.control.schedule;

import dev.panoptes.control.Plural;
import dev.panoptes.control.AttemptTimeoutException;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.store.ResultStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * One call to {@link Scheduler#run} (or a {@link SteppedRun}): the loop that takes events, checks
 * the source, deadlines and quarantines, dispatches, and decides when the run stops (all jobs
 * settled, the source failed, the store lost, or too long without a usable worker). The parts it
 * drives: {@link WaitingJobs} (what waits to be sent), {@link Dispatcher} (what is in flight, per
 * worker), {@link Retries} (what a failed attempt costs) and {@link RunLedger} (what is stored).
 *
 * <p><b>Threads: the run's turn.</b> Everything here is touched only by the thread that holds the
 * run's {@link #turn}. The caller of {@link #execute()} holds it except while it waits for events;
 * answers arrive on the workers' threads, and what the store made of each write on the store
 * writer's ({@link StoreWriter}), and reach the run as events through {@link #events}. A thread that
 * delivers answers as a {@linkplain HandOffBatch#openHost() host} (a selector thread completing its
 * pass's futures) takes the turn itself when it is free ({@link #tryHostedTurn}): it runs the
 * events queued before, then its answers, then decides and dispatches there, so that an answer
 * and the dispatch it frees a slot for never cross threads. The caller's thread keeps the timers:
 * it is woken when a hosted turn leaves it something to do sooner than it planned (see
 * {@link #mainNeeded}). A {@link SteppedRun} takes no hosted turns. Only {@link #queuedEvents()}
 * and {@link #awaitingEvents()} are safe from any thread.
 */
final class SchedulerRun {
    private static final Logger log = LoggerFactory.getLogger(SchedulerRun.class);

    private final WorkerSource source;
    private final ResultStore store;
    private final SchedulerOptions options;
    /** {@link SchedulerOptions#pollInterval()} in nanoseconds, read once: every round asks for it. */
    private final long pollNanos;
    private final ProgressListener listener;
    private final List<Job> jobs;
    private final Quarantine quarantine;
    private final WorkerWait workerWait;
    /**
     * What happened on other threads, for this one to act on. Unbounded in type but bounded in
     * use: at most one answer per attempt in flight (each attempt's future completes once), one
     * wakeup for source changes however many come ({@link #wakeQueued}), at most one late answer's
     * spend per attempt that ended before its answer came ({@link #lateSpend}), and from the store's
     * writer at most two per write waiting (see {@link StoreWriter}), of which there are at most
     * {@link SchedulerOptions.StoreRetry#maxHeld()} plus the attempts in flight.
     */
    private final RunEvents events = new RunEvents();
    /**
     * The run's turn: whoever holds it may touch the run's state (see the class comment). The
     * caller of {@link #execute()} takes it with {@code lock} (briefly waiting for a hosted turn to
     * end), a host only with {@code tryLock} (a host never waits: it queues its answers instead).
     */
    private final ReentrantLock turn = new ReentrantLock();
    /**
     * True while {@link #execute()}'s loop runs, so that hosts may take turns; set and cleared
     * under {@link #turn}, read by hosts before and again under it. Stepped runs and
     * {@link #finish} never set it.
     */
    private volatile boolean hosting;
    /**
     * When (the run's clock) the caller of {@link #execute()} wakes by itself from its wait, for a
     * hosted turn to tell whether it must be woken sooner. Under {@link #turn}.
     */
    private long mainWakesAt = Long.MAX_VALUE;
    /**
     * True once a host took a turn in this run: from then on the store's events wait for the next
     * turn while answers are in flight ({@link #postFromStore}). Written under {@link #turn}.
     */
    private volatile boolean hostsDecide;
    /**
     * {@link Dispatcher#inFlight()} as the last turn left it, for the store's thread to read.
     * Written at the end of every round, under {@link #turn}.
     */
    private volatile int inFlightSeen;
    /**
     * What a hosted turn threw, not yet rethrown on the run's own thread; once set, no host takes
     * a turn again. Written under {@link #turn}.
     */
    private volatile Throwable hostFailure;
    /** True while a wakeup is queued and not yet run. Any thread. */
    private final AtomicBoolean wakeQueued = new AtomicBoolean();
    private final Runnable wake = this::queueWake;
    /**
     * Where answers enter the run: the answers a worker's thread completes in one
     * {@link HandOffBatch} (a selector pass's) become one event, so this thread wakes once for
     * them, or, delivered by a host while the turn is free, are run on that thread
     * ({@link #tryHostedTurn}). Any thread.
     */
    private final HandOffBatch.Receiver<Runnable> answers = this::postAll;
    /**
     * An answer reached the source after its attempt had ended (timed out, cancelled): what it
     * spent is told to the listener on this thread, like a failed attempt's. Any thread.
     */
    private final WorkerSource.LateSpendListener lateSpend = this::queueLateSpend;
    private final WaitingJobs waiting = new WaitingJobs();
    private final Dispatcher dispatcher;
    private final RunLedger ledger;
    private final Retries retries;
    /** The run's clock, in {@link System#nanoTime()} units: the system's, or a test's. */
    private final LongSupplier clock;
    private final long startNanos;
    private int skipped;

    SchedulerRun(WorkerSource source, ResultStore store, SchedulerOptions options, List<Job> jobs,
                 LongSupplier clock) {
        this.clock = clock;
        this.startNanos = clock.getAsLong();
        this.source = source;
        this.store = store;
        this.options = options;
        this.pollNanos = options.pollInterval().toNanos();
        this.listener = options.listener();
        this.jobs = jobs;
        this.quarantine = new Quarantine(options);
        this.workerWait = new WorkerWait(options);
        this.dispatcher = new Dispatcher(options, quarantine, clock,
                (attempt, outcome, error) -> HandOffBatch.send(answers, () -> onAnswer(attempt, outcome, error)));
        this.ledger = new RunLedger(store, options, quarantine, events, this::postFromStore);
        this.retries = new Retries(options, quarantine, waiting, clock, ledger::fail);
    }

    /**
     * Runs the whole run on the calling thread, waiting for answers when there is nothing to do;
     * hosts may take turns while it waits.
     */
    RunReport execute() throws InterruptedException {
        turn.lock();
        try {
            begin();
            hosting = true;
            try {
                loop();
            } finally {
                hosting = false;
                mainWakesAt = Long.MAX_VALUE;
                end();
            }
        } finally {
            turn.unlock();
        }
        return report();
    }

    /** {@link #execute()}'s loop; holds the turn except while it waits. */
    private void loop() throws InterruptedException {
        while (ledger.outstanding() > 0) {
            if (Thread.interrupted()) {
                // Checked here, not only where the loop waits: a run that always has something
                // to dispatch would otherwise never notice.
                throw new InterruptedException("the run was interrupted with "
                        + Plural.of(ledger.outstanding(), "job") + " not done");
            }
            long now = clock.getAsLong();
            if (advanceInBatch(now)) {
                continue;
            }
            if (giveUpWithoutWorkers(now)) {
                break;
            }
            // Nothing held back here: the batch closed before this thread waits. The events are
            // taken only once the turn is held again (the next advance), never while waiting.
            long wait = waitNanos(now);
            mainWakesAt = now + wait;
            turn.unlock();
            try {
                events.await(wait);
            } catch (InterruptedException e) {
                // The loop's check says so, with what is not done.
                Thread.currentThread().interrupt();
            } finally {
                turn.lock();
                mainWakesAt = Long.MAX_VALUE;
            }
        }
    }

    /**
     * Does everything that can be done at the clock's present time without waiting, then gives
     * up on the jobs left if the run has waited too long without a usable worker.
     *
     * @return true while jobs remain to be done
     */
    boolean step() {
        if (ledger.outstanding() == 0) {
            return false;
        }
        long now = clock.getAsLong();
        do {
            while ((advanceInBatch(now) || !events.isEmpty()) && ledger.outstanding() > 0) {
                // Again at the same instant: an answer handled may free a slot for a ready job.
            }
        } while (ledger.outstanding() > 0 && ledger.writeQueuedHere());
        return ledger.outstanding() > 0 && !giveUpWithoutWorkers(now);
    }

    /**
     * Makes this run do its store writes on the stepping thread, at a fixed point of each
     * {@link #step()}, rather than on a writer thread whose timing would decide the order of
     * later steps. Before the run starts.
     */
    void writeInline() {
        ledger.writeInline();
    }

    /** Sets how long the store's writer lingers for a batch (tests). Before the run starts. */
    void storeLinger(long nanos) {
        ledger.storeLinger(nanos);
    }

    /** The jobs neither stored nor failed for good yet. */
    int outstanding() {
        return ledger.outstanding();
    }

    /** Reads what is done already and queues the rest; listens to the source from then on. */
    void begin() {
        Set<JobId> complete = options.skipCompleted() && !jobs.isEmpty() ? store.completedAmong(jobs) : Set.of();
        int toRun = 0;
        for (Job job : jobs) {
            if (complete.contains(job.id())) {
                skipped++;
            } else {
                waiting.add(job);
                toRun++;
            }
        }
        ledger.expect(toRun);
        log.info("run of {} starting ({} already complete, {} to run)", Plural.of(jobs.size(), "job"), skipped,
                toRun);
        listener.onStart(toRun, skipped);
        source.addListener(wake);
        source.addLateSpendListener(lateSpend);
    }

    /** Stops listening to the source. */
    void end() {
        source.removeListener(wake);
        source.removeLateSpendListener(lateSpend);
    }

    /** What the run did, so far or in the end. */
    RunReport report() {
        Duration elapsed = Duration.ofNanos(clock.getAsLong() - startNanos);
        RunReport report = new RunReport(jobs.size(), skipped, ledger.completed(), ledger.failed(),
                dispatcher.dispatches(), dispatcher.redeliveries(), ledger.duplicates(), ledger.completedByWorker(),
                elapsed, quarantine.report());
        log.info("run finished in {} ms: {} completed, {} skipped, {} failed, {} redeliveries, {} duplicates",
                elapsed.toMillis(), ledger.completed(), skipped, ledger.failed().size(), dispatcher.redeliveries(),
                ledger.duplicates());
        return report;
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
        return ledger.finish(report);
    }

    /** Stops the store's writer, however the run ended; what still waits for the store is lost (logged). */
    void abandon() {
        ledger.abandon();
    }

    /** Events queued and not yet run; for tests. Any thread. */
    int queuedEvents() {
        return events.size();
    }

    /**
     * True while the caller of {@link #execute()} waits for events with the turn free: an answer
     * a host delivers now is run on the host's thread (unless another host has the turn). For
     * tests. Any thread.
     */
    boolean awaitingEvents() {
        return events.awaited() && !turn.isLocked();
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
        waiting.promoteDue(now);
        dispatcher.expireDeadlines(now);
        releaseQuarantines(now);
        boolean progressed = dispatchReady() > 0 || ledger.outstanding() == 0;
        inFlightSeen = dispatcher.inFlight();
        return progressed;
    }

    /**
     * {@link #advance} with what it hands to other threads (jobs to a selector loop, writes to the
     * store's writer) held in one {@link HandOffBatch}: each of those threads is woken once for
     * the whole round, not once per job.
     */
    private boolean advanceInBatch(long now) {
        HandOffBatch round = HandOffBatch.open();
        try {
            return advance(now);
        } finally {
            round.close();
        }
    }

    /**
     * Takes the answers one batch of a worker's thread completed: runs them in a turn of their
     * own on a host's thread when it can, else queues them as one event. Any thread.
     */
    private void postAll(List<Runnable> answered) {
        if (hosting && HandOffBatch.deliveringOnHost() && tryHostedTurn(answered)) {
            return;
        }
        if (answered.size() == 1) {
            events.add(answered.get(0));
            return;
        }
        Runnable[] all = answered.toArray(new Runnable[0]);
        events.add(() -> {
            for (Runnable r : all) {
                r.run();
            }
        });
    }

    /**
     * A host's turn: when the turn is free (and this thread does not hold it already: answers a
     * turn itself completes, a deadline's cancel say, are queued for its next round), runs the
     * events queued before these answers (each poster's events keep their order, as every event is
     * taken under the turn), the answers, and one round of decisions, here; then wakes the run's
     * own thread if the round left it something to do sooner than it planned. Never waits.
     * Whatever the round throws ends the run on its own thread, as it would have there.
     *
     * @return false when the turn was not free, or the run no longer takes hosted turns: the
     *         caller queues the answers
     */
    private boolean tryHostedTurn(List<Runnable> answered) {
        if (turn.isHeldByCurrentThread() || !turn.tryLock()) {
            return false;
        }
        try {
            if (!hosting || hostFailure != null) {
                return false;
            }
            hostsDecide = true;
            try {
                long now = clock.getAsLong();
                HandOffBatch round = HandOffBatch.open();
                try {
                    runEvents();
                    for (int i = 0; i < answered.size(); i++) {
                        answered.get(i).run();
                    }
                    advance(now);
                } finally {
                    round.close();
                }
                if (mainNeeded(now)) {
                    events.add(NOTHING);
                }
            } catch (Throwable e) {
                // Ends the run on its own thread, which rethrows it; this host goes on with its pass.
                hostFailure = e;
                events.add(this::rethrowHostFailure);
            }
            return true;
        } finally {
            turn.unlock();
        }
    }

    /** An event that only wakes the run's thread, to look at the run again. */
    private static final Runnable NOTHING = () -> { };

    /**
     * True when the run's own thread must look at the run before it planned to: the run is over
     * (it ends there), nothing is in flight (only it gives up on a run without workers), or
     * the next timer (a retry's backoff, a quarantine's end, a deadline) comes before it wakes.
     * Under the turn.
     */
    private boolean mainNeeded(long now) {
        return ledger.outstanding() == 0 || dispatcher.inFlight() == 0 || now + waitNanos(now) < mainWakesAt;
    }

    /** Rethrows what a hosted turn threw, on the run's own thread. */
    private void rethrowHostFailure() {
        Throwable e = hostFailure;
        if (e instanceof RuntimeException r) {
            throw r;
        }
        if (e instanceof Error err) {
            throw err;
        }
        throw new IllegalStateException("a turn of the run on a worker's thread failed", e);
    }

    /**
     * What the store's writer made of its writes reaches the run: while hosts decide and answers are
     * in flight, the next host's turn runs it (its events first) and the run's thread is not woken
     * for it (at 2,600 answers a second that was a wake-up per commit, half of the thread's CPU);
     * the run's thread still finds it when it wakes by itself, at least every poll interval. When
     * nothing is in flight no answer will bring a host, so it wakes the run's thread: the last
     * commit of a run does. Safe against the race with the last answer: the event is queued before
     * {@link #inFlightSeen} is read, and whoever turns it to 0 looks at the queue after (the run's
     * thread before it waits; a host wakes the run's thread when nothing is in flight). Store thread.
     */
    private void postFromStore(Runnable event) {
        if (hosting && hostsDecide) {
            events.addQuietly(event);
            if (inFlightSeen == 0) {
                events.wakeWaiter();
            }
            return;
        }
        events.add(event);
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

    /** See {@link #lateSpend}. Any thread. */
    private void queueLateSpend(Job job, WorkerHandle worker, Usage usage) {
        events.add(() -> listener.onAttemptSpent(job, worker, usage));
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
            throw new WorkerSourceFailedException("the run stopped with " + Plural.of(ledger.outstanding(), "job")
                    + " not done ("
                    + dispatcher.inFlight() + " in flight, abandoned): its worker source failed: "
                    + (failure.getMessage() == null ? failure.toString() : failure.getMessage())
                    + "; what was stored is kept, and running the same jobs again resumes", failure);
        }
    }

    private void releaseQuarantines(long now) {
        for (WorkerHandle w : quarantine.releaseDue(now)) {
            log.info("worker={} - quarantine over; on probation: one job at a time until one succeeds", w.id());
            listener.onProbation(w);
        }
    }

    private long waitNanos(long now) {
        long wait = pollNanos;
        wait = Math.min(wait, waiting.nanosToNextDue(now));
        wait = Math.min(wait, dispatcher.nanosToDeadline(now));
        wait = Math.min(wait, quarantine.nanosToNextRelease(now));
        wait = Math.min(wait, workerWait.nanosToLimit(now));
        return Math.max(wait, 1);
    }

    /**
     * Dispatches ready jobs while some worker has a free slot, unless the store is down or has
     * too many answers waiting for it (they would only pile up). @return jobs dispatched
     */
    private int dispatchReady() {
        if (waiting.noneReady() || !ledger.accepting()) {
            return 0;
        }
        return dispatcher.dispatchReady(waiting, source.snapshot());
    }

    /** An attempt's answer reached this thread: stored next if it is one, else a failure to weigh. */
    private void onAnswer(JobState.Attempt attempt, JobOutcome outcome, Throwable error) {
        dispatcher.answered(attempt);
        JobState state = attempt.state;
        WorkerHandle worker = attempt.worker;
        if (error == null) {
            try {
                outcome.requireAnswers(state.job);
            } catch (IllegalArgumentException e) {
                // Its records' calls were paid for, though none of them is stored.
                error = new WorkerException("worker " + worker.id() + " gave a wrong answer: " + e.getMessage())
                        .addSpent(outcome.spent());
            }
        }
        options.gate().release(worker, error == null);
        if (error == null) {
            ledger.onCompleted(state, worker, outcome);
            return;
        }
        Throwable cause = unwrap(error);
        if (attempt.timedOut && cause instanceof CancellationException) {
            cause = new AttemptTimeoutException("job " + state.job.id() + " was not answered by worker " + worker.id()
                    + " within its deadline of " + options.jobTimeout().toMillis() + " ms (attempt " + state.attempts
                    + "); asked the worker to stop it");
        }
        if (cause instanceof ControlException e && e.spent().totalTokens() > 0) {
            // Paid for, and not stored: the budget and the summary count it all the same.
            listener.onAttemptSpent(state.job, worker, e.spent());
        }
        retries.onFailure(state, worker, cause);
    }

    /**
     * True when the run has waited too long with work and no usable worker (none connected, or
     * all quarantined), after failing what remained.
     */
    private boolean giveUpWithoutWorkers(long now) {
        if (waiting.noneReady() || dispatcher.inFlight() > 0) {
            workerWait.notWaiting();
            return false;
        }
        List<WorkerHandle> workers = source.snapshot();
        Set<String> wanted = waiting.wantedModels();
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
        String reason = workerWait.waiting(now, workers, serving, quarantine, ledger.outstanding(), wanted);
        if (reason == null) {
            return false;
        }
        for (JobState state : waiting.drain()) {
            ledger.fail(state, reason);
        }
        return true;
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
