package dev.panoptes.bench.cluster;

import dev.panoptes.bench.fake.BenchRunners;
import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.local.LocalPool;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;

import java.io.BufferedReader;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator of the scheduling measurement, in its own JVM: the real {@link Scheduler} over
 * the {@link SharedPool} of a real {@link WorkerServer}, whose workers (of unequal speed) run in
 * another JVM. For comparison it can also run the same jobs over in-process {@link LocalPool}
 * workers with the same speeds: the difference is what the network costs the makespan.
 *
 * <p>Commands: {@code await n=N}; {@code run jobs=J} (over the remote pool); {@code run-local
 * jobs=J workers=id:capacity:runner,...}. Both reply {@code RESULT makespanNanos=.. completed=..}
 * and the jobs completed per worker as {@code by=id:count,...}.
 */
public final class SchedulingCoordinator {
    private SchedulingCoordinator() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("INFO");
        try {
            // As the coordinator command: the scheduler's callback only queues an event.
            ServerOptions options = ServerOptions.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                    .directCompletions(true).build();
            SharedPool pool = new SharedPool();
            try (WorkerServer server = WorkerServer.start(options, pool)) {
                ChildIo.reply("READY", "port", server.address().getPort());
                BufferedReader commands = ChildIo.commands();
                int runs = 0;
                while (true) {
                    Kv cmd = ChildIo.nextCommand(commands);
                    runs++;
                    switch (cmd.tag()) {
                        case "await" -> {
                            int n = cmd.intValue("n");
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                            while (pool.size() < n && System.nanoTime() - deadline < 0) {
                                Thread.sleep(1);
                            }
                            ChildIo.reply("WORKERS", "n", pool.size());
                        }
                        case "run" -> report(run(pool, jobs("r" + runs, cmd.intValue("jobs"))));
                        case "run-local" -> {
                            try (LocalPool local = new LocalPool()) {
                                for (String spec : cmd.get("workers").split(",")) {
                                    String[] f = spec.split(":");
                                    local.start(f[0], Integer.parseInt(f[1]), BenchRunners.named(f[2]));
                                }
                                report(run(local, jobs("l" + runs, cmd.intValue("jobs"))));
                            }
                        }
                        default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                    }
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("scheduling coordinator", e);
        }
    }

    private static List<Job> jobs(String prefix, int count) {
        EvalSpec spec = new EvalSpec("scheduling", List.of(new Vignette("v0", "a prompt of no consequence")));
        List<Job> jobs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            jobs.add(new Job(JobId.of(prefix + "-" + i), spec));
        }
        return jobs;
    }

    private static RunReport run(WorkerSource source, List<Job> jobs) throws InterruptedException {
        Scheduler scheduler = new Scheduler(source, new InMemoryResultStore(),
                SchedulerOptions.defaults().withSkipCompleted(false));
        return scheduler.run(jobs);
    }

    private static void report(RunReport r) {
        StringBuilder by = new StringBuilder();
        for (Map.Entry<String, Integer> e : new TreeMap<>(r.completedByWorker()).entrySet()) {
            if (by.length() > 0) {
                by.append(',');
            }
            by.append(e.getKey()).append(':').append(e.getValue());
        }
        ChildIo.reply("RESULT", "makespanNanos", r.elapsed().toNanos(), "completed", r.completed(),
                "failed", r.failed().size(), "by", by);
    }
}
