package dev.panoptes.control.schedule;

import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What one run has settled: each answer and each final failure goes to the store through a
 * {@link StoreWriter} (made with the first), and the job counts as done only once the store has
 * taken it. Keeps the counts the report is made of: jobs outstanding, completed, failed,
 * duplicates, completions per worker.
 *
 * <p>Owned by whichever thread holds the run's turn (see {@link SchedulerRun}); not thread-safe.
 * The writer's results arrive through the run's event queue and are handled here under the turn;
 * {@link #finish} runs after the run's loop, on its thread alone. A store lost
 * for good surfaces as a {@link StoreUnavailableException} thrown from the event that says so.
 */
final class RunLedger {
    private static final Logger log = LoggerFactory.getLogger(RunLedger.class);

    private final ResultStore store;
    private final SchedulerOptions options;
    private final ProgressListener listener;
    private final Quarantine quarantine;
    /** The run's event queue, where the writer's events are run from in {@link #finish}. */
    private final RunEvents events;
    /** Where the writer posts what became of each write: into {@link #events}, waking the run or not. */
    private final Consumer<Runnable> post;
    private final List<RunReport.FailedJob> failed = new ArrayList<>();
    /** Jobs stored per worker id, a mutable count each: no boxed Integer per answer stored. */
    private final Map<String, int[]> completedByWorker = new HashMap<>();
    /** Writes answers and failures to the store, on a thread of its own; made with the first. */
    private StoreWriter writer;
    /** A stepped run writes on its own thread, within each step: see {@link SchedulerRun#writeInline()}. */
    private boolean inlineWrites;
    private int outstanding;
    /**
     * Writes submitted to the writer and not yet settled by it (stored, recorded or refused): once
     * they cover every job {@link #outstanding}, no answer is left to come and share their commit.
     */
    private int awaitingStore;
    /** How long the writer's oldest write waits for others to share its commit; see {@link StoreWriter#LINGER_NANOS}. */
    private long lingerNanos = StoreWriter.LINGER_NANOS;
    private int completed;
    private long duplicates;

    RunLedger(ResultStore store, SchedulerOptions options, Quarantine quarantine, RunEvents events,
              Consumer<Runnable> post) {
        this.post = post;
        this.store = store;
        this.options = options;
        this.listener = options.listener();
        this.quarantine = quarantine;
        this.events = events;
    }

    /** Makes the writer do its writes on the run's thread, when asked. Before the first write. */
    void writeInline() {
        inlineWrites = true;
    }

    /** Sets the writer's linger (tests: a long one shows what does not wait for it). Before the first write. */
    void storeLinger(long nanos) {
        lingerNanos = nanos;
    }

    /** The run starts with this many jobs to settle. */
    void expect(int jobs) {
        outstanding = jobs;
    }

    /** The jobs neither stored nor failed for good yet. */
    int outstanding() {
        return outstanding;
    }

    int completed() {
        return completed;
    }

    long duplicates() {
        return duplicates;
    }

    /** The jobs failed for good, in order; the live list, for the report. */
    List<RunReport.FailedJob> failed() {
        return failed;
    }

    /** Jobs stored per worker id, as of now, for the report. */
    Map<String, Integer> completedByWorker() {
        Map<String, Integer> counts = new HashMap<>();
        completedByWorker.forEach((id, n) -> counts.put(id, n[0]));
        return counts;
    }

    /** False while the store is down or has too many writes waiting: sending more would only pile up. */
    boolean accepting() {
        return writer == null || writer.accepting();
    }

    /** Does a write queued for the run's own thread, when writes are inline; true when it did one. */
    boolean writeQueuedHere() {
        return writer != null && writer.writeQueuedHere();
    }

    /** The job's answer passed its checks: it is stored next, and done once it is. */
    void onCompleted(JobState state, WorkerHandle worker, JobOutcome outcome) {
        quarantine.onSuccess(worker);
        // The job is done once its answer is stored (onStored): the store may be slow, or down
        // for a while, and the answer waits for it in the writer.
        submit(new StoreWriter.RecordWrite(state, worker, outcome));
    }

    /**
     * Hands a write to the writer; when it was the last the run's jobs can give (every job not
     * done has its answer or failure with the writer), tells the writer not to linger for more.
     */
    private void submit(StoreWriter.Write write) {
        StoreWriter w = writer();
        w.submit(write);
        awaitingStore++;
        if (awaitingStore >= outstanding) {
            w.lastWritesQueued();
        }
    }

    /** Fails the job for good: reported at once, done once its failure is recorded. */
    void fail(JobState state, String reason) {
        failed.add(new RunReport.FailedJob(state.job.id(), reason, state.attempts));
        // Done once recorded, as an answer is once stored.
        submit(new StoreWriter.FailureWrite(state, reason, state.attempts));
        log.warn("job={} - failed after {}: {}", state.job.id(), Plural.of(state.attempts, "attempt"), reason);
        listener.onFailed(state.job, reason, state.attempts);
    }

    /** A job's answer is stored: it is done. */
    private void onStored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
        awaitingStore--;
        JobState state = write.state();
        WorkerHandle worker = write.worker();
        duplicates += receipt.duplicates();
        completed++;
        int[] byWorker = completedByWorker.get(worker.id());
        if (byWorker == null) {
            completedByWorker.put(worker.id(), byWorker = new int[1]);
        }
        byWorker[0]++;
        outstanding--;
        if (log.isDebugEnabled()) {
            // Guarded: four arguments are an array and two boxed ints per answer even when off.
            log.debug("worker={} job={} - completed ({} stored, {} duplicates)", worker.id(), state.job.id(),
                    receipt.stored(), receipt.duplicates());
        }
        listener.onCompleted(state.job, worker, write.outcome(), receipt);
    }

    /**
     * The store refused a write for what it holds. An answer it cannot keep is its job's own
     * failure (another attempt would most likely give one like it); a failure it cannot keep is
     * only logged, the job being failed already.
     */
    private void onRefused(StoreWriter.Write write, RecordRejectedException error) {
        awaitingStore--;
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
            writer = new StoreWriter(store, options.storeRetry(), post, writerOutcomes(), inlineWrites, lingerNanos);
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
                awaitingStore--;
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
     * After the run's loop returned: waits until the store has taken every write still waiting
     * (failures recorded as the run gave up, say), running the run's events, and returns the
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
            events.await(poll);
            Runnable event = events.poll();
            if (event != null) {
                event.run();
            }
        }
        if (completed == report.completed() && duplicates == report.duplicates()
                && failed.size() == report.failed().size()) {
            return report;
        }
        return new RunReport(report.totalJobs(), report.skipped(), completed, failed, report.attempts(),
                report.redeliveries(), duplicates, completedByWorker(), report.elapsed(), report.quarantined());
    }

    /** Stops the store's writer, however the run ended; what still waits for the store is lost (logged). */
    void abandon() {
        if (writer != null) {
            writer.abandon();
        }
    }
}
