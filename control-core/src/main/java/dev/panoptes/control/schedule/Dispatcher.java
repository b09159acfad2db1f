package dev.panoptes.control.schedule;

import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Sends one run's ready jobs to workers and keeps what is in flight: the attempts per worker
 * (against each worker's slots and quarantine limit), their deadlines, and the round-robin
 * cursor that spreads jobs over the fleet.
 *
 * <p>Owned by the thread running the scheduler's {@code run}; not thread-safe. A worker's reply
 * may complete on any thread: it is handed to {@link Answers} there, which must only queue it for
 * the run's thread, and that thread reports it back with {@link #answered}. Each attempt's answer
 * arrives once (its future completes once; a deadline only cancels it, which is that answer).
 */
final class Dispatcher {
    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    /** Where a worker's reply goes, on whatever thread completed it. */
    interface Answers {
        void arrived(JobState.Attempt attempt, JobOutcome outcome, Throwable error);
    }

    private final Quarantine quarantine;
    private final DispatchGate gate;
    private final ProgressListener listener;
    private final LongSupplier clock;
    private final long jobTimeoutNanos;
    private final Answers answers;
    /**
     * Attempts in deadline order. The timeout is the same for all, so dispatch order is deadline
     * order and a deque does; answered attempts leave from the head as they reach it.
     */
    private final ArrayDeque<JobState.Attempt> deadlines = new ArrayDeque<>();
    private final Map<WorkerHandle, int[]> inFlight = new IdentityHashMap<>();
    private int inFlightTotal;
    private int cursor;
    private long dispatches;
    private long redeliveries;

    Dispatcher(SchedulerOptions options, Quarantine quarantine, LongSupplier clock, Answers answers) {
        this.quarantine = quarantine;
        this.gate = options.gate();
        this.listener = options.listener();
        this.clock = clock;
        this.jobTimeoutNanos = options.jobTimeout().toNanos();
        this.answers = answers;
    }

    /**
     * Sends ready jobs while one of {@code workers} (the source's snapshot) has a free slot.
     *
     * @return jobs dispatched
     */
    int dispatchReady(WaitingJobs waiting, List<WorkerHandle> workers) {
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
        for (Iterator<JobState> it = waiting.ready(); it.hasNext() && freeTotal > 0; ) {
            JobState state = it.next();
            int chosen;
            // A worker the gate holds back (its model API is at the fleet's limit) counts as full for
            // this pass; the job may still go to a worker behind another API.
            while ((chosen = choose(state, workers, free)) >= 0 && !gate.tryAcquire(workers.get(chosen), state.job)) {
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
        if (log.isDebugEnabled()) {
            // Guarded: three arguments are an array and a boxed int per dispatch even when off.
            log.debug("worker={} job={} - dispatching, attempt {}", worker.id(), state.job.id(), state.attempts);
        }
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
        reply.whenComplete((outcome, error) -> answers.arrived(attempt, outcome, error));
    }

    /** The attempt's answer reached the run's thread: its worker's slot is free again. */
    void answered(JobState.Attempt attempt) {
        attempt.answered = true;
        int[] busy = inFlight.get(attempt.worker);
        if (--busy[0] == 0) {
            inFlight.remove(attempt.worker);
        }
        inFlightTotal--;
    }

    /** Cancels every attempt past its deadline; its answer (the cancellation) arrives as usual. */
    void expireDeadlines(long now) {
        JobState.Attempt a;
        while ((a = deadlines.peekFirst()) != null && (a.answered || a.deadlineNanos - now <= 0)) {
            deadlines.pollFirst();
            if (!a.answered) {
                a.timedOut = true;
                // Completes the future (unless the answer won the race), which queues its answer.
                a.reply.cancel(true);
            }
        }
    }

    /** Nanoseconds until the oldest attempt's deadline (0 when past), or {@link Long#MAX_VALUE}. */
    long nanosToDeadline(long now) {
        JobState.Attempt oldest = deadlines.peekFirst();
        return oldest == null ? Long.MAX_VALUE : Math.max(0, oldest.deadlineNanos - now);
    }

    /** Attempts sent and not yet answered. */
    int inFlight() {
        return inFlightTotal;
    }

    /** Dispatches made, counted as attempts or not. */
    long dispatches() {
        return dispatches;
    }

    /** Dispatches of a job that had been dispatched before. */
    long redeliveries() {
        return redeliveries;
    }
}
