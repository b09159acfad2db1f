package dev.panoptes.bench.cluster;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;

import java.io.BufferedReader;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator of the failure-detection measurement, in its own JVM: a real
 * {@link WorkerServer} and the real {@link Scheduler} over its {@link SharedPool}, with every
 * step of a lost job timed on the shared monotonic clock: the connection's loss (the server's
 * {@code onLost}), the job's future failing ({@link TimedSource}), the scheduler noting the retry
 * ({@code onRetry}), the redispatch ({@code onDispatched}, attempt 2) and its completion.
 *
 * <p>Commands: {@code await n=N}; {@code start-run jobs=J victim=ID} (replies {@code HELD} once
 * the victim holds its share); {@code lost t0=NANOS} (the parent killed or stopped the victim at
 * t0; replies {@code RESULT} with each step's delay after t0, once the run is over).
 * Arguments: {@code heartbeatMs heartbeatTimeoutMs}.
 */
public final class FailureCoordinator {
    private final SharedPool pool = new SharedPool();
    private final Map<String, Long> lostAt = new ConcurrentHashMap<>();
    private int runs;

    private FailureCoordinator() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("INFO");
        try {
            new FailureCoordinator().serve(Long.parseLong(args[0]), Long.parseLong(args[1]));
        } catch (Exception | Error e) {
            ChildIo.die("failure coordinator", e);
        }
    }

    private void serve(long heartbeatMs, long heartbeatTimeoutMs) throws Exception {
        ServerOptions options = ServerOptions.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .heartbeatInterval(Duration.ofMillis(heartbeatMs))
                .heartbeatTimeout(Duration.ofMillis(heartbeatTimeoutMs))
                .build();
        WorkerServer.Listener listener = new WorkerServer.Listener() {
            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
                lostAt.putIfAbsent(worker.id(), System.nanoTime());
            }
        };
        try (WorkerServer server = WorkerServer.start(options, pool, listener)) {
            ChildIo.reply("READY", "port", server.address().getPort());
            BufferedReader commands = ChildIo.commands();
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                switch (cmd.tag()) {
                    case "await" -> {
                        int n = cmd.intValue("n");
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                        while (pool.size() != n && System.nanoTime() - deadline < 0) {
                            Thread.sleep(1);
                        }
                        ChildIo.reply("WORKERS", "n", pool.size());
                    }
                    case "start-run" -> oneRun(cmd.intValue("jobs"), cmd.get("victim"), commands);
                    default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                }
            }
        }
    }

    private void oneRun(int jobCount, String victimId, BufferedReader commands) throws Exception {
        runs++;
        EvalSpec spec = new EvalSpec("failure", List.of(new Vignette("v0", "held prompt")));
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < jobCount; i++) {
            jobs.add(new Job(JobId.of("run" + runs + "-job" + i), spec));
        }
        Map<JobId, Long> retriedAt = new ConcurrentHashMap<>();
        Map<JobId, Long> redispatchedAt = new ConcurrentHashMap<>();
        Map<JobId, Long> completedAt = new ConcurrentHashMap<>();
        Map<JobId, Boolean> onVictim = new ConcurrentHashMap<>();
        ProgressListener listener = new ProgressListener() {
            @Override
            public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                if (attempt == 1 && worker.id().equals(victimId)) {
                    onVictim.put(job.id(), true);
                } else if (attempt > 1) {
                    redispatchedAt.putIfAbsent(job.id(), System.nanoTime());
                }
            }

            @Override
            public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
                retriedAt.putIfAbsent(job.id(), System.nanoTime());
            }

            @Override
            public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
                completedAt.put(job.id(), System.nanoTime());
            }
        };
        TimedSource source = new TimedSource(pool);
        Scheduler scheduler = new Scheduler(source, new InMemoryResultStore(),
                SchedulerOptions.defaults().withSkipCompleted(false).withListener(listener));
        CompletableFuture<RunReport> report = CompletableFuture.supplyAsync(() -> {
            try {
                return scheduler.run(jobs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        RemoteWorker victim = awaitVictim(victimId);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int held;
        while ((held = victim.pendingCount()) < victim.capacity() && System.nanoTime() - deadline < 0) {
            Thread.sleep(1);
        }
        ChildIo.reply("HELD", "n", held);

        Kv lost = ChildIo.nextCommand(commands);
        if (!lost.tag().equals("lost")) {
            throw new IllegalStateException("expected lost, got " + lost.tag());
        }
        long t0 = lost.longValue("t0");
        RunReport r = report.get(60, TimeUnit.SECONDS);
        long failMax = 0;
        long retryMax = 0;
        long redispatchMax = 0;
        long completeMax = 0;
        long failMin = Long.MAX_VALUE;
        int victimJobs = 0;
        for (JobId id : onVictim.keySet()) {
            victimJobs++;
            long failedNanos = source.endsOf(id).stream().filter(TimedSource.Ended::failed)
                    .mapToLong(TimedSource.Ended::nanos).findFirst().orElseThrow();
            failMax = Math.max(failMax, failedNanos - t0);
            failMin = Math.min(failMin, failedNanos - t0);
            retryMax = Math.max(retryMax, retriedAt.get(id) - t0);
            redispatchMax = Math.max(redispatchMax, redispatchedAt.get(id) - t0);
            completeMax = Math.max(completeMax, completedAt.get(id) - t0);
        }
        Long lostNanos = lostAt.get(victimId);
        ChildIo.reply("RESULT", "victimJobs", victimJobs, "completed", r.completed(), "failed", r.failed().size(),
                "redeliveries", r.redeliveries(), "lostNanos", lostNanos == null ? -1 : lostNanos - t0,
                "failMinNanos", failMin, "failMaxNanos", failMax, "retryMaxNanos", retryMax,
                "redispatchMaxNanos", redispatchMax, "completeMaxNanos", completeMax);
    }

    private RemoteWorker awaitVictim(String victimId) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() - deadline < 0) {
            for (WorkerHandle w : pool.snapshot()) {
                if (w.id().equals(victimId) && w instanceof RemoteWorker remote) {
                    return remote;
                }
            }
            Thread.sleep(1);
        }
        throw new IllegalStateException("victim " + victimId + " is not in the pool");
    }
}
