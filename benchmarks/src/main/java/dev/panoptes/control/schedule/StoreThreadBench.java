package dev.panoptes.control.schedule;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The coordinator's {@code result-store} thread alone: the scheduler's real {@link StoreWriter}
 * (its queue, group commit and batching) writing to a real {@link JdbcResultStore} that scores
 * each answer with the run's scorer, as the {@code coordinator} command sets it up. The calling
 * thread plays the scheduler: it submits one write per job as answers come in (at a set rate,
 * in the small bursts a scheduler's loop makes), and runs the events the writer posts back. The
 * figure is the CPU of the writer's thread ({@link ThreadMXBean#getThreadCpuTime}) per answer
 * stored: everything the store path costs the coordinator's store thread, from taking a write off
 * the queue to posting its result.
 *
 * <p>It lives in the scheduler's package because the writer is package-private there: the
 * benchmark drives the product's class, not a copy of it.
 */
public final class StoreThreadBench {
    /** One round's figures. */
    public record Result(long answers, double storeThreadMicrosPerAnswer, double answersPerSecond,
                         double answersPerCommit) {
    }

    private StoreThreadBench() {
    }

    /** The writer's own linger for a batch ({@link StoreWriter#LINGER_NANOS}), in milliseconds. */
    public static double defaultLingerMillis() {
        return StoreWriter.LINGER_NANOS / 1e6;
    }

    /**
     * Stores {@code answers} answers in jobs of {@code jobSize} vignettes through a new writer on
     * {@code store} (already scored with the run's scoring), submitting at {@code ratePerSecond}
     * answers a second (0: as fast as the writer takes them, at most its {@code maxHeld} waiting).
     *
     * @param tag makes this round's job ids its own (a PostgreSQL database is shared by the rounds)
     * @throws IllegalStateException when the store did not store every answer once
     */
    public static Result round(JdbcResultStore store, int answers, int jobSize, int ratePerSecond, String tag)
            throws InterruptedException {
        return round(store, answers, jobSize, ratePerSecond, tag, StoreWriter.LINGER_NANOS);
    }

    /** As {@link #round(JdbcResultStore, int, int, int, String)}, the writer lingering {@code lingerNanos} for a batch. */
    public static Result round(JdbcResultStore store, int answers, int jobSize, int ratePerSecond, String tag,
                               long lingerNanos) throws InterruptedException {
        return round(store, answers, jobSize, ratePerSecond, tag, lingerNanos, false);
    }

    /**
     * As {@link #round(JdbcResultStore, int, int, int, String, long)}; when {@code cacheable}, the
     * requests are the response cache's kind (temperature 0, a model source), so that each record
     * keeps its request's key ({@link dev.panoptes.control.RequestKey#stored}), as a run with the
     * cache on stores them.
     */
    public static Result round(JdbcResultStore store, int answers, int jobSize, int ratePerSecond, String tag,
                               long lingerNanos, boolean cacheable) throws InterruptedException {
        return round(store, answers, jobSize, ratePerSecond, tag, lingerNanos, cacheable, 0);
    }

    /**
     * As {@link #round(JdbcResultStore, int, int, int, String, long, boolean)}, the answers coming
     * back out of job order as a fleet's do: with {@code inFlight} jobs out at once, each answer is
     * that of a job drawn at random among them, and the next job of the plan takes its place. Job ids
     * are the plan's (the run id, a dash, the job's number zero-padded: see
     * {@link dev.panoptes.control.suite.JobPlan}), so that what a batch's inserts touch in the
     * records' key index is what a fleet's touch: keys scattered over the in-flight window, rather
     * than appended one after another. 0 (or 1) keeps the plan's order.
     */
    public static Result round(JdbcResultStore store, int answers, int jobSize, int ratePerSecond, String tag,
                               long lingerNanos, boolean cacheable, int inFlight) throws InterruptedException {
        SpecParams params = cacheable
                ? new SpecParams(null, 0.0, null, null, "stub-arithmetic").withModelSource("model-id stub-arithmetic")
                : new SpecParams(null, null, null, null, "stub-arithmetic");
        int jobs = Math.max(1, answers / jobSize);
        List<StoreWriter.RecordWrite> writes = new ArrayList<>(jobs);
        Random random = new Random(7);
        WorkerHandle worker = new BenchWorker();
        String runId = "run-" + tag;
        for (int j = 0; j < jobs; j++) {
            List<Vignette> vignettes = new ArrayList<>(jobSize);
            List<ResponseRecord> records = new ArrayList<>(jobSize);
            for (int v = 0; v < jobSize; v++) {
                int a = 1 + random.nextInt(999);
                int b = 1 + random.nextInt(999);
                String id = "q" + (j * jobSize + v);
                vignettes.add(new Vignette(id, "What is " + a + " + " + b + "?", Integer.toString(a + b), Map.of()));
                // Nine in ten right, as the stub's arithmetic model answers.
                String answer = Integer.toString(random.nextInt(10) == 0 ? a + b + 1 : a + b);
                records.add(new ResponseRecord(id, answer, "stub-arithmetic", "stop", 20L + random.nextInt(5),
                        new Usage(14, 2)));
            }
            Job job = new Job(JobId.of(String.format(Locale.ROOT, "%s-%07d", tag, j)), new EvalSpec("suite", vignettes,
                    params), runId, 0);
            writes.add(new StoreWriter.RecordWrite(new JobState(job), worker, new JobOutcome(job.id(), records)));
        }
        if (inFlight > 1) {
            writes = inFleetOrder(writes, inFlight, random);
        }
        long[] stored = new long[1];
        long[] calls = new long[1];
        Thread[] writerThread = new Thread[1];
        ConcurrentLinkedQueue<Runnable> events = new ConcurrentLinkedQueue<>();
        ResultStore counted = new ForwardingResultStore(store) {
            @Override
            public void recordAll(List<Answer> batch, List<Written> done) {
                writerThread[0] = Thread.currentThread();
                calls[0]++;
                forwardRecordAll(batch, done);
            }
        };
        StoreWriter writer = new StoreWriter(counted, new SchedulerOptions.StoreRetry(Duration.ofMillis(100),
                Duration.ofSeconds(1), Duration.ofMinutes(1), 1_000), events::add, new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
                stored[0] += receipt.stored();
            }

            @Override
            public void failureStored(StoreWriter.FailureWrite write) {
            }

            @Override
            public void refused(StoreWriter.Write write, RecordRejectedException error) {
                throw new IllegalStateException("the store refused a write: " + error.getMessage(), error);
            }

            @Override
            public void down(String error, int held) {
                throw new IllegalStateException("the store failed: " + error);
            }

            @Override
            public void back(Duration outage, int held) {
            }

            @Override
            public void lost(Throwable error, Duration outage, int held, boolean permanent) {
                throw new IllegalStateException("the writer gave up: " + error, error);
            }
        }, false, lingerNanos);
        long expected = (long) jobs * jobSize;
        long t0 = System.nanoTime();
        long jobsPerSecond = ratePerSecond <= 0 ? 0 : Math.max(1, ratePerSecond / jobSize);
        int next = 0;
        while (stored[0] < expected) {
            Runnable event;
            while ((event = events.poll()) != null) {
                event.run();
            }
            if (next < jobs) {
                long due = jobsPerSecond == 0 ? jobs
                        : Math.min(jobs, (System.nanoTime() - t0) * jobsPerSecond / 1_000_000_000L + 1);
                while (next < due && writer.accepting()) {
                    writer.submit(writes.get(next++));
                }
            }
            // A scheduler's loop wakes for the next answer or event; this one looks every 100 us.
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        long nanos = System.nanoTime() - t0;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu = mx.getThreadCpuTime(writerThread[0].getId());
        writer.finish();
        while (writer.working()) {
            Runnable event;
            while ((event = events.poll()) != null) {
                event.run();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (stored[0] != expected) {
            throw new IllegalStateException("stored " + stored[0] + " answers, expected " + expected);
        }
        return new Result(expected, cpu / 1e3 / expected, expected * 1e9 / nanos, (double) expected / calls[0]);
    }

    /**
     * The writes in the order a fleet with {@code inFlight} jobs out answers them: each next answer
     * is that of a job drawn at random among those out, whose place the plan's next job takes.
     */
    static List<StoreWriter.RecordWrite> inFleetOrder(List<StoreWriter.RecordWrite> writes, int inFlight,
                                                      Random random) {
        List<StoreWriter.RecordWrite> out = new ArrayList<>(writes.size());
        List<StoreWriter.RecordWrite> pool = new ArrayList<>(Math.min(inFlight, writes.size()));
        int next = 0;
        while (out.size() < writes.size()) {
            while (pool.size() < inFlight && next < writes.size()) {
                pool.add(writes.get(next++));
            }
            int i = random.nextInt(pool.size());
            out.add(pool.get(i));
            pool.set(i, pool.get(pool.size() - 1));
            pool.remove(pool.size() - 1);
        }
        return out;
    }

    /** The worker the writes name: only its id is read. */
    private static final class BenchWorker implements WorkerHandle {
        @Override
        public String id() {
            return "bench-worker";
        }

        @Override
        public int capacity() {
            return 64;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            throw new UnsupportedOperationException("the store benchmark dispatches nothing");
        }
    }
}
