package dev.panoptes.control.schedule;

import dev.panoptes.control.Plural;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Writes one run's answers and final failures to its {@link ResultStore}, in the order they were
 * decided, on a thread of its own ({@code result-store}), so that the scheduler never waits for
 * the store and a store that fails for a while costs no answer. It owns the writes not yet done,
 * the store's up or down state and the retries; the run owns what the writes mean
 * ({@link RunLedger}).
 *
 * <p>A write that fails with a {@link StoreException} is tried again, after a backoff that
 * doubles up to a cap ({@link SchedulerOptions.StoreRetry}), and the writes behind it wait: the
 * store is <em>down</em> from its first failure to its next success, which is logged once each
 * way. While it is down, or while {@link SchedulerOptions.StoreRetry#maxHeld()} writes wait,
 * {@link #accepting} says no, so that the run sends no new job. When the store has taken no write
 * for {@link SchedulerOptions.StoreRetry#maxOutage()}, or fails with anything but a
 * {@link StoreException} (a closed store, a bug), the writer gives up and tells the run, which
 * stops. A {@link RecordRejectedException} is not an outage: it is the job's own failure.
 *
 * <p><b>Batches.</b> The answers queued one behind another (up to {@value #BATCH} writes,
 * {@value StoreCalls#BATCH_RECORDS} records or {@link StoreCalls#BATCH_CHARS} characters of responses) go to the store
 * in one {@link ResultStore#recordAll} call, which a JDBC store commits as one transaction: the cost of a
 * commit is paid once per batch, and a batch forms by itself when answers come faster than
 * commits. An answer is told to the run as stored only once the store reports it done, so after
 * the commit of its batch; a batch that fails is written again whole (less what the store reports
 * done) by the retries above; one answer the store refuses is refused alone.
 *
 * <p><b>Threads.</b> The scheduler's thread calls {@link #submit}, {@link #accepting},
 * {@link #finish}, {@link #working}, {@link #abandon} and, for an inline writer,
 * {@link #writeQueuedHere}; {@link #held} may be read on any thread. The writes run on the
 * writer's thread, started by the first write after none was on and ended by {@link #finish}
 * (once every write is done) or {@link #abandon}; an inline writer starts no thread and writes on
 * the scheduler's thread, inside {@link #writeQueuedHere}. What became of each write reaches the
 * scheduler's thread as an event, through {@code post}, in the order of the writes, so
 * {@link Outcomes} is only ever called there: at most one event per batch of writes, plus one per
 * change between down and up and one as the thread stops, so no more than two per write waiting.
 *
 * <p>The writes waiting and the thread's lifecycle (lingering, draining, abandoning) are kept by
 * {@link StoreQueue}; the store calls of a batch are made by {@link StoreCalls}.
 */
final class StoreWriter {
    private static final Logger log = LoggerFactory.getLogger(StoreWriter.class);
    /**
     * Writes taken at once: their results reach the scheduler in one event, and the answers among
     * them go to the store in one call, committed together. Only a queue that is deep fills it (a
     * shallow one ends its batch when the linger does), and there a larger batch is cheaper per
     * answer: a fleet answers out of job order, so each answer of a batch dirties a key-index page
     * of its own, and the more answers a commit holds the more of them share a page (on SQLite,
     * with 64,000 jobs in flight, batches of 256 wrote 1.5 WAL pages per answer, of 1,024 0.9; in
     * the fleet benchmark, 2,048 rather than 512 took the store thread from 17.6 to 11.6 us per
     * answer). Not more: a batch past half the default {@code maxHeld} of 4,096 would hold dispatch
     * back while it commits.
     */
    static final int BATCH = 2048;
    /**
     * How long the oldest write waiting may wait for others to share its commit. A commit costs
     * the store thread about as much as half a dozen answers (on SQLite some 100-140 us: waking,
     * the WAL append and its page writes, the event to the scheduler; on PostgreSQL a round trip
     * and a flush), so answers that arrive within this of each other go in one transaction; the
     * answer that waits longest is acknowledged this much later. Only a shallow queue waits it
     * out (a deep one fills a batch first), and its answers' slots are free already (the
     * scheduler frees a slot when the answer arrives, not when it is stored): what a longer wait
     * costs is the run's end (its last batch waits too) and, if the coordinator is killed, the
     * answers of one more linger sent again on resume. In the one-worker product run (2,700
     * answers/s) the store thread cost 25-27 us per answer at 2 ms, 15-19 at 10 ms
     * (docs/DESIGN.md, "What a batch costs SQLite").
     */
    static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How long {@link #abandon} lets a store that works store what waits. */
    private static final long ABANDON_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** What the scheduler hears of the writes; every method is called on its thread. */
    interface Outcomes {
        /** The answer is stored. */
        void stored(RecordWrite write, ResultStore.Receipt receipt);

        /** The final failure is recorded. */
        void failureStored(FailureWrite write);

        /** The store refused the write for what it holds: writing it again cannot help. */
        void refused(Write write, RecordRejectedException error);

        /** The store failed a write and is down: {@code held} writes wait. */
        void down(String error, int held);

        /** The store took a write again after {@code outage}; {@code held} writes still wait. */
        void back(Duration outage, int held);

        /**
         * The writer gave up: the store failed every write for {@code outage} (or, when
         * {@code permanent}, failed in a way retrying cannot mend); {@code held} writes were not
         * done. Expected to stop the run by throwing.
         */
        void lost(Throwable error, Duration outage, int held, boolean permanent);
    }

    /** One write, in the order the run decided it. */
    sealed interface Write permits RecordWrite, FailureWrite {
        JobState state();
    }

    /** A job's answer, from a worker. */
    record RecordWrite(JobState state, WorkerHandle worker, JobOutcome outcome) implements Write {
    }

    /** A job's final failure. */
    record FailureWrite(JobState state, String reason, int attempts) implements Write {
    }

    private final ResultStore store;
    private final SchedulerOptions.StoreRetry retry;
    private final Consumer<Runnable> post;
    private final Outcomes outcomes;
    /** The writes not taken yet, and the writing thread's lifecycle. */
    private final StoreQueue queue;
    /** Owned by the scheduler's thread. */
    private Thread thread;
    /** Writes submitted and not done (stored, refused or given up on). Any thread. */
    private final AtomicInteger held = new AtomicInteger();
    /** Makes the store calls; the writing thread's. */
    private final StoreCalls calls;
    /** From the store's first failure to its next success. Written by the writer's thread. */
    private volatile boolean down;

    /**
     * @param post     hands an event to the scheduler's thread; must not block
     * @param outcomes told, on the scheduler's thread, what became of each write
     */
    StoreWriter(ResultStore store, SchedulerOptions.StoreRetry retry, Consumer<Runnable> post, Outcomes outcomes) {
        this(store, retry, post, outcomes, false);
    }

    /**
     * @param inline when true, no thread is started: the scheduler's thread does the writes itself,
     *               in {@link #writeQueuedHere()} (a run stepped by its caller, whose steps must not
     *               depend on when another thread gets round to writing)
     */
    StoreWriter(ResultStore store, SchedulerOptions.StoreRetry retry, Consumer<Runnable> post, Outcomes outcomes,
                boolean inline) {
        this(store, retry, post, outcomes, inline, LINGER_NANOS);
    }

    /** @param lingerNanos how long the oldest write waits for others to share its commit ({@link #LINGER_NANOS}) */
    StoreWriter(ResultStore store, SchedulerOptions.StoreRetry retry, Consumer<Runnable> post, Outcomes outcomes,
                boolean inline, long lingerNanos) {
        this.store = store;
        this.retry = retry;
        this.post = post;
        this.outcomes = outcomes;
        this.queue = new StoreQueue(post, inline, lingerNanos);
        this.calls = new StoreCalls(store, outcomes);
    }

    /**
     * An inline writer's writes, done on the calling thread (the scheduler's): every write
     * queued is done, retried as the store needs, and what became of it posted, before this
     * returns.
     *
     * @return true when there was something to write
     */
    boolean writeQueuedHere() {
        if (!queue.beginInline()) {
            return false;
        }
        run();
        queue.endInline();
        return true;
    }

    /** Queues a write after every one before it; starts the writer's thread when none is on. */
    void submit(Write write) {
        held.incrementAndGet();
        if (queue.add(write)) {
            thread = new Thread(this::run, "result-store");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** True while the writer's thread waits for more writes to share a commit; for tests. */
    boolean lingering() {
        return queue.lingering();
    }

    /** True while the store is up and fewer than {@code maxHeld} writes wait: new jobs may go out. */
    boolean accepting() {
        return !down && held.get() < retry.maxHeld();
    }

    /** Writes submitted and not done yet. */
    int held() {
        return held.get();
    }

    /**
     * Every write of the run is submitted: the writer commits what it holds without lingering for
     * more (see {@link StoreQueue#lastWritesQueued}), so that the end of a run does not wait a
     * linger for its last answers. Any thread; returns at once.
     */
    void lastWritesQueued() {
        queue.lastWritesQueued();
    }

    /**
     * Lets the writer's thread end once every write submitted is done (or it gave up); returns at
     * once. A write submitted later starts a thread again.
     */
    void finish() {
        queue.finish();
    }

    /** True while a writer's thread has writes to do or may still post events about them. */
    boolean working() {
        return queue.working();
    }

    /**
     * Ends the writer: while the store works it gets a moment to store what waits, then the
     * writer stops after the store call in progress, and what still waits is not stored (logged).
     * When this returns the store is called no more, so the count it logs is exactly what the
     * store did not take, and the caller may close the store. It waits for a store call in
     * progress to return however long that takes (a store's own timeouts bound it), and is not
     * cut short by an interrupt, which it restores. Idempotent.
     */
    void abandon() {
        if (thread == null) {
            return;
        }
        boolean interrupted = queue.abandon(System.nanoTime() + ABANDON_FLUSH_NANOS, () -> down);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        int lost = held.get();
        if (lost > 0) {
            log.warn("{} waiting for the result store {} not stored; running the same jobs again sends their"
                    + " jobs again", Plural.of(lost, "answer or failure", "answers and failures"),
                    lost == 1 ? "was" : "were");
        }
    }

    private void run() {
        try {
            writeAll();
        } catch (Throwable t) {
            // Anything but a store's own failure: retrying cannot mend it, and the run must hear
            // of it rather than wait for writes that never come.
            log.error("writing to the result store failed for good: {}", t.toString(), t);
            queue.giveUp(() -> outcomes.lost(t, Duration.ZERO, held.get(), true));
        }
    }

    /** Writes until told to stop; returns when done, abandoned, or after giving up. */
    private void writeAll() throws InterruptedException {
        List<Write> batch = new ArrayList<>(BATCH);
        List<Runnable> results = new ArrayList<>();
        List<Runnable> done = new ArrayList<>();
        long downSince = 0;
        int failures = 0;
        while (true) {
            if (!queue.take(batch)) {
                return;
            }
            int i = 0;
            while (i < batch.size()) {
                if (!queue.enterStoreCall()) {
                    // Abandoned: what this thread did is told, and nothing more is written.
                    flush(results);
                    queue.stopAbandoned();
                    return;
                }
                done.clear();
                StoreException failure = null;
                RuntimeException broken = null;
                Error fatal = null;
                try {
                    calls.writeFrom(batch, i, done);
                } catch (StoreException e) {
                    failure = e;
                } catch (RuntimeException e) {
                    broken = e;
                } catch (Error e) {
                    fatal = e;
                }
                if (!done.isEmpty()) {
                    held.addAndGet(-done.size());
                    if (down) {
                        down = false;
                        Duration outage = Duration.ofNanos(System.nanoTime() - downSince);
                        int waiting = held.get();
                        log.info("result store back after {} ms and {}; storing the {} it held, in order, and"
                                + " sending jobs again", outage.toMillis(), Plural.of(failures, "failed attempt"),
                                Plural.of(waiting, "answer or failure", "answers and failures"));
                        results.add(() -> outcomes.back(outage, waiting));
                    }
                    results.addAll(done);
                    i += done.size();
                }
                queue.leaveStoreCall();
                if (broken != null || fatal != null) {
                    // The writes the store reported done before it failed are told as done; the
                    // run then hears, after them, that the writer gave up (run()).
                    flush(results);
                    if (broken != null) {
                        throw broken;
                    }
                    throw fatal;
                }
                if (failure == null) {
                    if (done.isEmpty()) {
                        throw new IllegalStateException(store + " returned from recordAll without doing any write");
                    }
                    continue;
                }
                long now = System.nanoTime();
                if (!down) {
                    down = true;
                    downSince = now;
                    failures = 0;
                    int waiting = held.get();
                    log.warn("result store down: {}; {} {} held in memory and no new job is sent until it"
                            + " takes writes again (retrying for up to {} s)", failure.getMessage(),
                            Plural.of(waiting, "answer or failure", "answers and failures"),
                            waiting == 1 ? "is" : "are", retry.maxOutage().toSeconds());
                    String error = failure.getMessage();
                    results.add(() -> outcomes.down(error, waiting));
                }
                failures++;
                flush(results);
                long outage = now - downSince;
                if (outage >= retry.maxOutage().toNanos()) {
                    Duration d = Duration.ofNanos(outage);
                    StoreException last = failure;
                    log.error("result store down for {} s ({} failed attempts), the limit: the run stops; last"
                            + " error: {}", d.toSeconds(), failures, failure.getMessage());
                    queue.giveUp(() -> outcomes.lost(last, d, held.get(), false));
                    return;
                }
                long pause = Math.min(backoffNanos(failures), retry.maxOutage().toNanos() - outage);
                if (!queue.pause(pause)) {
                    return;
                }
            }
            batch.clear();
            flush(results);
        }
    }

    private void flush(List<Runnable> results) {
        if (results.isEmpty()) {
            return;
        }
        Runnable[] events = results.toArray(new Runnable[0]);
        results.clear();
        post.accept(() -> {
            for (Runnable event : events) {
                event.run();
            }
        });
    }

    /** The configured backoff for the {@code failures}th failure in a row, doubling, capped. */
    private long backoffNanos(int failures) {
        long base = retry.backoff().toNanos();
        long cap = retry.maxBackoff().toNanos();
        int doublings = Math.min(failures - 1, 30);
        long delay = base > cap >> doublings ? cap : base << doublings;
        return Math.max(0, Math.min(delay, cap));
    }
}
