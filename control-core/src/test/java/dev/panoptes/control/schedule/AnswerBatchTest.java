package dev.panoptes.control.schedule;

import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Answers handed to the scheduler in batches, as a selector pass completes them
 * ({@link HandOffBatch}), seeded: each batch is one event on the scheduler's queue however many
 * answers it holds; a batch may straddle a connection's close (answers, then every pending job of
 * that worker failed retryably, in one batch) and a deadline's cancel may cross an answer in the
 * same batch (the answer completed the future, the scheduler cancels before the batch is handed
 * over, or the other way round). Whatever the order, every job is stored exactly once, no worker
 * holds more than its capacity, and no job is held by two workers at once.
 *
 * <p>The batches are opened on a thread of their own (the "selector"), which keeps one batch
 * open across several of its tasks while the test's thread steps the run: that is how a step
 * falls between an answer and the batch's hand-over.
 */
class AnswerBatchTest {
    private static final long TIMEOUT_MS = 1_000;

    /** A worker whose answers the test gives; it lets go of a job when its future is done. */
    private final class BatchedWorker implements WorkerHandle {
        final String id;
        final int capacity;
        final Map<CompletableFuture<JobOutcome>, Job> held = new HashMap<>();

        BatchedWorker(String id, int capacity) {
            this.id = id;
            this.capacity = capacity;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public synchronized CompletableFuture<JobOutcome> dispatch(Job job) {
            held.keySet().removeIf(CompletableFuture::isDone);
            assertThat(held).as("seed %d: worker %s holds at most its capacity", seed, id).hasSizeLessThan(capacity);
            for (BatchedWorker w : workers) {
                assertThat(w.holding(job.id())).as("seed %d: job %s is held by %s already", seed, job.id(), w.id)
                        .isFalse();
            }
            CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
            held.put(reply, job);
            return reply;
        }

        synchronized boolean holding(JobId job) {
            for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : held.entrySet()) {
                if (!e.getKey().isDone() && e.getValue().id().equals(job)) {
                    return true;
                }
            }
            return false;
        }

        synchronized List<Map.Entry<CompletableFuture<JobOutcome>, Job>> pending() {
            List<Map.Entry<CompletableFuture<JobOutcome>, Job>> out = new ArrayList<>();
            for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : held.entrySet()) {
                if (!e.getKey().isDone()) {
                    out.add(Map.entry(e.getKey(), e.getValue()));
                }
            }
            out.sort((a, b) -> a.getValue().id().toString().compareTo(b.getValue().id().toString()));
            return out;
        }
    }

    private long seed;
    private long nowMs;
    private final List<BatchedWorker> workers = new ArrayList<>();
    /** The "selector": one thread, so that a batch stays open across its tasks. */
    private ExecutorService selector;

    @BeforeEach
    void startSelector() {
        selector = Executors.newSingleThreadExecutor(r -> new Thread(r, "answer-batch-selector"));
    }

    @AfterEach
    void stopSelector() throws InterruptedException {
        selector.shutdownNow();
        assertThat(selector.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void everyJobIsStoredOnceWhateverTheBatchesHold() throws Exception {
        long base = Long.getLong("panoptes.answerBatch.seed", System.nanoTime());
        int schedules = Integer.getInteger("panoptes.answerBatch.schedules", 200);
        for (int i = 0; i < schedules; i++) {
            play(base + i);
        }
    }

    private void play(long seed) throws Exception {
        this.seed = seed;
        Random rnd = new Random(seed);
        nowMs = 10_000;
        workers.clear();
        WorkerSet pool = new WorkerSet();
        int serial = 0;
        for (int w = 1 + rnd.nextInt(3); w > 0; w--) {
            BatchedWorker worker = new BatchedWorker("w" + serial++, 1 + rnd.nextInt(4));
            workers.add(worker);
            pool.add(worker);
        }
        List<Job> jobs = TestJobs.jobs("b" + seed, 5 + rnd.nextInt(40));
        InMemoryResultStore store = new InMemoryResultStore();
        SchedulerOptions options = SchedulerOptions.defaults()
                .withJobTimeout(Duration.ofMillis(TIMEOUT_MS))
                .withMaxAttempts(1_000)
                .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(10))
                .withWaitForWorkers(Duration.ofDays(1))
                .withQuarantine(3, Duration.ofMillis(50), Duration.ofMillis(200))
                .withSkipCompleted(false);
        SchedulerRun run = new SchedulerRun(pool, store, options, jobs, () -> TimeUnit.MILLISECONDS.toNanos(nowMs));
        run.writeInline();
        run.begin();
        try {
            run.step();
            for (int round = 0; round < 400 && run.outstanding() > 0; round++) {
                boolean benign = round > 200;
                onSelector(() -> pass(rnd, pool, benign, HandOffBatch.open()), run, rnd, benign);
                if (!benign && rnd.nextInt(4) == 0) {
                    nowMs += rnd.nextInt((int) TIMEOUT_MS * 2);
                } else {
                    nowMs += 20;
                }
                run.step();
                assertThat(run.queuedEvents()).as("seed %d: a step leaves no event behind", seed).isZero();
            }
            assertThat(run.outstanding()).as("seed %d: the run ended", seed).isZero();
        } finally {
            run.end();
            run.abandon();
        }
        RunReport report = run.report();
        assertThat(report.completed()).as("seed %d", seed).isEqualTo(jobs.size());
        assertThat(report.failed()).as("seed %d", seed).isEmpty();
        assertThat(store.recordCount()).as("seed %d: each job stored once", seed).isEqualTo(jobs.size());
        assertThat(store.duplicateCount()).as("seed %d", seed).isZero();
    }

    /**
     * One selector pass: opens a batch, answers or fails some pending jobs, maybe closes a
     * worker midway, maybe lets the scheduler step while the batch is still open (so that its
     * deadlines cross the answers held), then hands the batch over, and checks that the
     * scheduler got one event for all of it.
     */
    private void onSelector(PassStart start, SchedulerRun run, Random rnd, boolean benign) throws Exception {
        int before = run.queuedEvents();
        assertThat(before).isZero();
        List<CompletableFuture<JobOutcome>> completedHere = selector.submit(start::begin).get();
        if (!benign && rnd.nextInt(3) == 0) {
            // The scheduler steps while the batch holds answers: deadlines that pass now cancel
            // attempts whose answer is already decided (the cancel loses) or not (it wins).
            nowMs += TIMEOUT_MS / 2 + rnd.nextInt((int) TIMEOUT_MS);
            run.step();
            int afterStep = run.queuedEvents();
            assertThat(afterStep).as("seed %d: held answers are not seen before the batch closes", seed).isZero();
            // Then this pass reads answers for some of what the step cancelled: they lose.
            selector.submit(() -> {
                for (BatchedWorker w : workers) {
                    for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : w.pending()) {
                        if (rnd.nextBoolean()) {
                            e.getKey().complete(TestJobs.echo(e.getValue()));
                            completedHere.add(e.getKey());
                        }
                    }
                }
            }).get();
        }
        selector.submit(this::closeOpenBatch).get();
        // One event for the batch's answers, and at most one wake-up for a worker that closed
        // and came back (the pool changed).
        int events = run.queuedEvents();
        assertThat(events).as("seed %d: one batch, one event (%d answers in it)", seed, completedHere.size())
                .isLessThanOrEqualTo(closedInPass ? 2 : 1);
        if (!completedHere.isEmpty() && !closedInPass) {
            assertThat(events).as("seed %d", seed).isEqualTo(1);
        }
    }

    private interface PassStart {
        List<CompletableFuture<JobOutcome>> begin();
    }

    /** The batch the pass opened on the selector thread; closed by {@link #closeOpenBatch()}. */
    private HandOffBatch openBatch;
    /** The pass closed a worker (and another took its place). */
    private boolean closedInPass;

    private List<CompletableFuture<JobOutcome>> pass(Random rnd, WorkerSet pool, boolean benign, HandOffBatch batch) {
        openBatch = batch;
        closedInPass = false;
        List<CompletableFuture<JobOutcome>> completed = new ArrayList<>();
        Set<BatchedWorker> closing = new HashSet<>();
        if (!benign && rnd.nextInt(6) == 0 && !workers.isEmpty()) {
            closing.add(workers.get(rnd.nextInt(workers.size())));
        }
        for (BatchedWorker w : new ArrayList<>(workers)) {
            List<Map.Entry<CompletableFuture<JobOutcome>, Job>> pending = w.pending();
            int answered = 0;
            for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : pending) {
                int r = rnd.nextInt(10);
                if (benign || r < 6) {
                    e.getKey().complete(TestJobs.echo(e.getValue()));
                    completed.add(e.getKey());
                    answered++;
                } else if (r == 6) {
                    e.getKey().completeExceptionally(new WorkerException("a moment's failure of " + e.getValue().id()));
                    completed.add(e.getKey());
                }
                if (closing.contains(w) && answered == 1) {
                    break;
                }
            }
            if (closing.contains(w)) {
                // The connection ends in the same pass, after answers read from it: it leaves
                // the pool first, then every job it still holds fails retryably.
                closedInPass = true;
                pool.remove(w);
                workers.remove(w);
                for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : w.pending()) {
                    e.getKey().completeExceptionally(new WorkerException("worker connection lost"));
                    completed.add(e.getKey());
                }
                BatchedWorker back = new BatchedWorker(w.id + "'", w.capacity);
                workers.add(back);
                pool.add(back);
            }
        }
        return completed;
    }

    private void closeOpenBatch() {
        HandOffBatch batch = openBatch;
        openBatch = null;
        batch.close();
    }
}
