package dev.panoptes.control.schedule;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.store.ResultStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs a list of jobs over a {@link WorkerSource} until each is stored or has failed for good.
 *
 * <ul>
 *   <li><b>Work-conserving.</b> Every decision takes a fresh {@link WorkerSource#snapshot()}; a
 *       job goes to any worker with a free slot (its capacity minus the jobs this run has in
 *       flight on it), round-robin, so a job never waits behind a busy worker while another
 *       has room. Fast workers free their slots sooner and so take more jobs.</li>
 *   <li><b>Redelivery.</b> A job whose dispatch failed retryably is sent again, to a worker it
 *       has not failed on when there is one, up to {@link SchedulerOptions#maxAttempts()}. The
 *       first redelivery is immediate (a lost connection says nothing about the job); later
 *       ones back off exponentially. A non-retryable failure is final at once.</li>
 *   <li><b>Waiting.</b> With work and no worker at all, the run waits (woken by the source's
 *       change listener, or polling) for up to {@link SchedulerOptions#waitForWorkers()}, then
 *       fails what remains.</li>
 *   <li><b>Storing.</b> Each outcome goes to the {@link ResultStore}, which ignores records it
 *       has (at-least-once delivery, stored once); each final failure is recorded there too.
 *       With {@link SchedulerOptions#skipCompleted()}, jobs already complete are not sent.</li>
 * </ul>
 *
 * <p>All decisions are made on the thread that calls {@link #run}; answers arrive on the
 * workers' threads and are handed to it through a queue. One run at a time per instance.
 */
public final class Scheduler {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private static final long WAITING_REPORT_NANOS = TimeUnit.SECONDS.toNanos(5);

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
     *                                  stays stored, jobs in flight are abandoned
     * @throws dev.panoptes.control.store.StoreException when the store fails
     */
    public RunReport run(List<Job> jobs) throws InterruptedException {
        Set<JobId> ids = new HashSet<>();
        for (Job job : jobs) {
            if (!ids.add(job.id())) {
                throw new IllegalArgumentException("job id " + job.id() + " appears more than once in this run; "
                        + "job ids must be unique because results are stored under them");
            }
        }
        return new Run(jobs).execute();
    }

    /** One job's progress through a run. */
    private static final class JobState {
        final Job job;
        /** Workers it failed on, by identity: a reconnected worker is a new handle and may be tried. */
        final Set<WorkerHandle> failedOn = Collections.newSetFromMap(new IdentityHashMap<>());
        int attempts;
        long dueNanos;

        JobState(Job job) {
            this.job = job;
        }
    }

    /** The state of one call to {@link #run}; touched only by the calling thread. */
    private final class Run {
        private final List<Job> jobs;
        private final BlockingQueue<Runnable> events = new LinkedBlockingQueue<>();
        private final Runnable wake = () -> events.add(() -> { });
        private final ArrayDeque<JobState> ready = new ArrayDeque<>();
        private final PriorityQueue<JobState> delayed =
                new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));
        private final Map<WorkerHandle, int[]> inFlight = new IdentityHashMap<>();
        private final List<RunReport.FailedJob> failed = new ArrayList<>();
        private final Map<String, Integer> completedByWorker = new HashMap<>();
        private final long startNanos = System.nanoTime();
        private int outstanding;
        private int inFlightTotal;
        private int completed;
        private int skipped;
        private long attempts;
        private long redeliveries;
        private long duplicates;
        private int cursor;
        private long noWorkersSinceNanos = -1;
        private long lastWaitingReportNanos;

        Run(List<Job> jobs) {
            this.jobs = jobs;
        }

        RunReport execute() throws InterruptedException {
            Set<JobId> complete = options.skipCompleted() && !jobs.isEmpty()
                    ? store.completedAmong(jobs) : Set.of();
            for (Job job : jobs) {
                if (complete.contains(job.id())) {
                    skipped++;
                } else {
                    ready.add(new JobState(job));
                }
            }
            outstanding = ready.size();
            log.info("run of {} jobs starting ({} already complete, {} to run)", jobs.size(), skipped, outstanding);
            options.listener().onStart(outstanding, skipped);
            source.addListener(wake);
            try {
                while (outstanding > 0) {
                    runEvents();
                    long now = System.nanoTime();
                    promoteDue(now);
                    if (dispatchReady() > 0 || outstanding == 0) {
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
                source.removeListener(wake);
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
            RunReport report = new RunReport(jobs.size(), skipped, completed, failed, attempts, redeliveries,
                    duplicates, completedByWorker, elapsed);
            log.info("run finished in {} ms: {} completed, {} skipped, {} failed, {} redeliveries, {} duplicates",
                    elapsed.toMillis(), completed, skipped, failed.size(), redeliveries, duplicates);
            return report;
        }

        private void runEvents() {
            Runnable event;
            while ((event = events.poll()) != null) {
                event.run();
            }
        }

        private void promoteDue(long now) {
            while (!delayed.isEmpty() && delayed.peek().dueNanos - now <= 0) {
                ready.add(delayed.poll());
            }
        }

        private long waitNanos(long now) {
            long wait = options.pollInterval().toNanos();
            if (!delayed.isEmpty()) {
                wait = Math.min(wait, Math.max(0, delayed.peek().dueNanos - now));
            }
            if (noWorkersSinceNanos >= 0) {
                long deadline = noWorkersSinceNanos + options.waitForWorkers().toNanos();
                wait = Math.min(wait, Math.max(0, deadline - now));
            }
            return Math.max(wait, 1);
        }

        /** Dispatches ready jobs while some worker has a free slot. @return jobs dispatched */
        private int dispatchReady() {
            if (ready.isEmpty()) {
                return 0;
            }
            List<WorkerHandle> workers = source.snapshot();
            int n = workers.size();
            if (n == 0) {
                return 0;
            }
            int[] free = new int[n];
            int freeTotal = 0;
            for (int i = 0; i < n; i++) {
                WorkerHandle w = workers.get(i);
                int[] busy = inFlight.get(w);
                free[i] = Math.max(0, w.capacity() - (busy == null ? 0 : busy[0]));
                freeTotal += free[i];
            }
            int dispatched = 0;
            for (Iterator<JobState> it = ready.iterator(); it.hasNext() && freeTotal > 0; ) {
                JobState state = it.next();
                int chosen = choose(state, workers, free);
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
         * failed on. Returns -1 when the only free workers are ones it failed on while an
         * untried worker exists (busy now): the job waits for that one.
         */
        private int choose(JobState state, List<WorkerHandle> workers, int[] free) {
            int n = workers.size();
            int fallback = -1;
            boolean untriedExists = false;
            for (int k = 0; k < n; k++) {
                int i = Math.floorMod(cursor + k, n);
                WorkerHandle w = workers.get(i);
                boolean tried = state.failedOn.contains(w);
                untriedExists |= !tried;
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
            state.attempts++;
            attempts++;
            if (state.attempts > 1) {
                redeliveries++;
            }
            inFlight.computeIfAbsent(worker, w -> new int[1])[0]++;
            inFlightTotal++;
            log.debug("worker={} job={} - dispatching, attempt {}", worker.id(), state.job.id(), state.attempts);
            options.listener().onDispatched(state.job, worker, state.attempts);
            CompletableFuture<JobOutcome> reply;
            try {
                reply = worker.dispatch(state.job);
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(new WorkerException(
                        "dispatch of job " + state.job.id() + " to worker " + worker.id() + " failed: " + e, e));
            }
            reply.whenComplete((outcome, error) -> events.add(() -> onAnswer(state, worker, outcome, error)));
        }

        private void onAnswer(JobState state, WorkerHandle worker, JobOutcome outcome, Throwable error) {
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
            if (error == null) {
                ResultStore.Receipt receipt = store.record(outcome, worker.id());
                duplicates += receipt.duplicates();
                completed++;
                completedByWorker.merge(worker.id(), 1, Integer::sum);
                outstanding--;
                log.debug("worker={} job={} - completed ({} stored, {} duplicates)", worker.id(), state.job.id(),
                        receipt.stored(), receipt.duplicates());
                options.listener().onCompleted(state.job, worker, outcome, receipt);
                return;
            }
            Throwable cause = unwrap(error);
            boolean retryable = !(cause instanceof ControlException) || ((ControlException) cause).isRetryable();
            String reason = String.valueOf(cause.getMessage() == null ? cause : cause.getMessage());
            if (!retryable) {
                fail(state, reason);
            } else if (state.attempts >= options.maxAttempts()) {
                fail(state, "gave up after " + state.attempts + " attempts; last failure: " + reason);
            } else {
                state.failedOn.add(worker);
                Duration delay = backoff(state.attempts);
                state.dueNanos = System.nanoTime() + delay.toNanos();
                if (delay.isZero()) {
                    ready.addFirst(state);
                } else {
                    delayed.add(state);
                }
                log.info("worker={} job={} - attempt {} failed retryably, sending again in {} ms: {}", worker.id(),
                        state.job.id(), state.attempts, delay.toMillis(), reason);
                options.listener().onRetry(state.job, worker, cause, state.attempts, delay);
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
            store.recordFailure(state.job.id(), reason, state.attempts);
            outstanding--;
            log.warn("job={} - failed after {} attempts: {}", state.job.id(), state.attempts, reason);
            options.listener().onFailed(state.job, reason, state.attempts);
        }

        /** True when the run has waited too long with work and no worker, after failing what remained. */
        private boolean giveUpWithoutWorkers(long now) {
            if (ready.isEmpty() || inFlightTotal > 0 || !source.snapshot().isEmpty()) {
                noWorkersSinceNanos = -1;
                return false;
            }
            if (noWorkersSinceNanos < 0) {
                noWorkersSinceNanos = now;
                lastWaitingReportNanos = now;
                log.info("{} jobs are waiting and no worker is connected; waiting up to {} s", outstanding,
                        options.waitForWorkers().toSeconds());
            }
            long waited = now - noWorkersSinceNanos;
            if (now - lastWaitingReportNanos >= WAITING_REPORT_NANOS) {
                lastWaitingReportNanos = now;
                log.info("still no worker connected after {} s; {} jobs waiting", TimeUnit.NANOSECONDS.toSeconds(waited),
                        outstanding);
                options.listener().onWaitingForWorkers(Duration.ofNanos(waited));
            }
            if (waited < options.waitForWorkers().toNanos()) {
                return false;
            }
            String reason = "no worker connected for " + Duration.ofNanos(waited).toMillis() + " ms (limit "
                    + options.waitForWorkers().toMillis() + " ms); start workers pointed at the coordinator";
            List<JobState> remaining = new ArrayList<>(ready);
            remaining.addAll(delayed);
            ready.clear();
            delayed.clear();
            for (JobState state : remaining) {
                fail(state, reason);
            }
            return true;
        }

        private Throwable unwrap(Throwable error) {
            Throwable t = error;
            while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
                t = t.getCause();
            }
            return t;
        }
    }
}
