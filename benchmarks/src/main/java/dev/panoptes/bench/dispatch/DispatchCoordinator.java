package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.fake.BenchTls;
import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Latency;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import javax.net.ssl.SSLContext;
import java.io.BufferedReader;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The coordinator of the dispatch measurement, in its own JVM: a real {@link WorkerServer} on
 * loopback and a driver that keeps exactly K jobs in flight through {@link RemoteWorker#dispatch}
 * on the one registered worker. Each completion (on the server's completion threads, or on its
 * selector thread with {@code directCompletions}) records the job's latency, from the
 * {@code dispatch} call to the future's completion, and dispatches the next job, so the number in
 * flight never drops below K for longer than that hand-off. The main thread only reads commands
 * and waits for a run's window to end.
 *
 * <p>Commands: {@code await-worker}, then {@code run k=K warmupMs=W measureMs=M} as often as
 * wanted, and {@code quit}; replies {@code WORKER}, {@code MEASURE-START}, {@code MEASURE-END} and
 * {@code RESULT} (jobs, nanos, latency in microseconds, and the busiest threads of this JVM in the
 * window).
 *
 * <p>Arguments: {@code selectorThreads completionThreads [directCompletions]}; TLS when the system
 * property {@link BenchTls#PROPERTY} names a key store.
 */
public final class DispatchCoordinator {
    /** The 16-byte prompt of every job. */
    public static final String PROMPT = "0123456789abcdef";
    /** Job ids are fixed-width, so every assign frame has the same size as the echo floor's. */
    public static final int ID_DIGITS = 12;

    private final WorkerHandle worker;
    private final EvalSpec spec = new EvalSpec("bench", List.of(new Vignette("v0", PROMPT)));
    private final Recorder recorder = new Recorder(1, Latency.HIGHEST_TRACKABLE_NANOS, 3);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong nextId = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean running;

    private DispatchCoordinator(WorkerHandle worker) {
        this.worker = worker;
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("INFO");
        try {
            ServerOptions.Builder builder = ServerOptions.builder()
                    .bind(new InetSocketAddress("127.0.0.1", 0))
                    .selectorThreads(Integer.parseInt(args[0]))
                    .completionThreads(Integer.parseInt(args[1]))
                    .directCompletions(args.length > 2 && Boolean.parseBoolean(args[2]));
            SSLContext tls = BenchTls.serverContext();
            if (tls != null) {
                builder.tls(tls, false);
            }
            ServerOptions options = builder.build();
            SharedPool pool = new SharedPool();
            try (WorkerServer server = WorkerServer.start(options, pool)) {
                ChildIo.reply("READY", "port", server.address().getPort());
                BufferedReader commands = ChildIo.commands();
                DispatchCoordinator driver = null;
                while (true) {
                    Kv cmd = ChildIo.nextCommand(commands);
                    switch (cmd.tag()) {
                        case "await-worker" -> {
                            WorkerHandle w = awaitWorker(pool);
                            driver = new DispatchCoordinator(w);
                            ChildIo.reply("WORKER", "id", w.id(), "capacity", w.capacity());
                        }
                        case "run" -> {
                            if (driver == null) {
                                throw new IllegalStateException("run before await-worker");
                            }
                            driver.round(cmd.intValue("k"), cmd.longValue("warmupMs"), cmd.longValue("measureMs"));
                        }
                        case "quit" -> {
                            return;
                        }
                        default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                    }
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("dispatch coordinator", e);
        }
    }

    private static WorkerHandle awaitWorker(SharedPool pool) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (pool.isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no worker registered within 60 s");
            }
            Thread.sleep(5);
        }
        return pool.snapshot().get(0);
    }

    private void round(int k, long warmupMs, long measureMs) throws InterruptedException {
        if (k > worker.capacity()) {
            throw new IllegalArgumentException("K=" + k + " exceeds the worker's capacity " + worker.capacity());
        }
        running = true;
        for (int i = 0; i < k; i++) {
            issue();
        }
        Thread.sleep(warmupMs);
        recorder.getIntervalHistogram(); // drops the warm-up's samples
        long c0 = completed.get();
        Map<String, Long> threads0 = Machine.threadCpuNanos();
        long cpu0 = Machine.ownCpuNanos();
        long t0 = System.nanoTime();
        ChildIo.reply("MEASURE-START");
        Thread.sleep(measureMs);
        long t1 = System.nanoTime();
        long c1 = completed.get();
        Histogram h = recorder.getIntervalHistogram();
        long cpu1 = Machine.ownCpuNanos();
        Map<String, Long> threads1 = Machine.threadCpuNanos();
        ChildIo.reply("MEASURE-END");
        running = false;
        long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (inFlight.get() > 0 && System.nanoTime() - drainDeadline < 0) {
            Thread.sleep(1);
        }
        Throwable failed = failure.getAndSet(null);
        if (failed != null) {
            throw new IllegalStateException("a dispatch failed during the round", failed);
        }
        if (inFlight.get() > 0) {
            throw new IllegalStateException(inFlight.get() + " jobs still in flight 30 s after the round");
        }
        Object[] latency = Latency.of(h).kv();
        Object[] head = {"k", k, "jobs", c1 - c0, "nanos", t1 - t0, "selfCpuNanos", cpu1 - cpu0,
                "threads", Machine.busiestThreads(threads0, threads1, t1 - t0, 6)};
        Object[] all = new Object[head.length + latency.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(latency, 0, all, head.length, latency.length);
        ChildIo.reply("RESULT", all);
    }

    /** Dispatches one job; its completion dispatches the next while the round runs. */
    private void issue() {
        inFlight.incrementAndGet();
        long startNanos = System.nanoTime();
        CompletableFuture<JobOutcome> reply = worker.dispatch(new Job(JobId.of(nextJobId()), spec));
        reply.whenComplete((outcome, error) -> onDone(startNanos, error));
    }

    private void onDone(long startNanos, Throwable error) {
        long now = System.nanoTime();
        inFlight.decrementAndGet();
        if (error != null) {
            // Stop chaining: a dead connection would otherwise fail every new dispatch at once.
            failure.compareAndSet(null, error);
            running = false;
            return;
        }
        recorder.recordValue(Math.max(1, now - startNanos));
        completed.incrementAndGet();
        if (running) {
            issue();
        }
    }

    private String nextJobId() {
        long n = nextId.incrementAndGet();
        char[] id = new char[ID_DIGITS + 1];
        id[0] = 'j';
        for (int i = ID_DIGITS; i >= 1; i--) {
            id[i] = (char) ('0' + n % 10);
            n /= 10;
        }
        return new String(id);
    }

    /** The id the driver gives its n-th job, for sizing the echo floor's frames. */
    public static String sampleJobId() {
        return "j" + "0".repeat(ID_DIGITS - 1) + "1";
    }
}
