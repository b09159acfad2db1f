package dev.panoptes.bench.cluster;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Jcmd;
import dev.panoptes.bench.harness.JfrSummary;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Perf;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measurement 2, connection scale: N registered, heartbeating workers on one coordinator.
 * A {@link ScaleCoordinator} JVM and a {@link ManyWorkers} JVM per run, fresh for every run so
 * that each starts from the same empty heap.
 *
 * <p>Per run: the coordinator's heap after a full GC and its thread count with no worker; then
 * N workers connect and register (timed on the workers' side, from the first connect to the
 * last {@code registered} received); after a settling period, heap after GC and threads again,
 * then the coordinator's CPU over a window while every worker heartbeats (and the coordinator
 * heartbeats back), and a check that no worker was lost.
 */
public final class ScaleBench {
    /** How to run it: the options of the {@code scale} command. */
    public record Options(List<Integer> ns, int runs, long heartbeatMs, long heartbeatTimeoutMs, long settleMs,
                   long cpuWindowMs, int connectParallel, boolean profile) {
    }

    private record Run(double registerSeconds, double heapMb, double bytesPerWorker, int threads0, int threads,
                       double cpuPercent, double workerCpuPercent, int pool, int lost, double heartbeatsPerSecond,
                       String busiest) {
    }

    private ScaleBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        long fdLimit = Machine.openFileLimit();
        List<List<String>> rows = new ArrayList<>();
        List<String> busiest = new ArrayList<>();
        boolean allMet = true;
        for (int n : o.ns()) {
            if (fdLimit >= 0 && fdLimit < n + 256) {
                report.line("SKIPPED N=" + n + ": the open-file limit is " + fdLimit + " and each JVM needs about "
                        + (n + 256) + " (one socket per worker); raise it with `ulimit -n " + (n + 1024)
                        + "` (and the hard limit in /etc/security/limits.conf if needed), then re-run.");
                allMet = false;
                continue;
            }
            List<Run> runs = new ArrayList<>();
            for (int r = 0; r < o.runs(); r++) {
                Run run = once(ctx, report, o, n, r, false);
                runs.add(run);
                report.progress(String.format(Locale.ROOT,
                        "N=%d run %d: registered in %.2f s, heap %.1f MB (%.0f B/worker), threads %d -> %d,"
                                + " idle CPU %.1f%% of a core (%s), pool %d, lost %d, %.0f heartbeats/s [load %.2f]",
                        n, r + 1, run.registerSeconds(), run.heapMb(), run.bytesPerWorker(), run.threads0(),
                        run.threads(), run.cpuPercent(), run.busiest(), run.pool(), run.lost(),
                        run.heartbeatsPerSecond(), Machine.loadAverage()));
            }
            Stats perWorker = Stats.of(runs.stream().map(Run::bytesPerWorker).toList());
            boolean held = runs.stream().allMatch(x -> x.pool() == n && x.lost() == 0);
            boolean constantThreads = runs.stream().allMatch(x -> x.threads() == x.threads0());
            rows.add(List.of(Integer.toString(n),
                    Stats.of(runs.stream().map(Run::registerSeconds).toList()).format(2),
                    Stats.of(runs.stream().map(Run::heapMb).toList()).format(1),
                    String.format(Locale.ROOT, "%.1f (%.1f-%.1f)", perWorker.median() / 1024, perWorker.min() / 1024,
                            perWorker.max() / 1024),
                    runs.get(0).threads0() + " -> " + runs.get(0).threads() + (constantThreads ? " (constant)" : ""),
                    Stats.of(runs.stream().map(Run::cpuPercent).toList()).format(1),
                    Stats.of(runs.stream().map(Run::heartbeatsPerSecond).toList()).format(0),
                    Stats.of(runs.stream().map(Run::workerCpuPercent).toList()).format(1),
                    held ? "all " + n + ", 0 lost" : "NOT all held"));
            busiest.add("- N=" + n + ": " + runs.get(runs.size() - 1).busiest());
            allMet &= held && constantThreads && perWorker.median() < 20 * 1024;
        }
        report.line("");
        report.line("### scale (" + o.runs() + " fresh runs per N; heartbeat " + o.heartbeatMs() + " ms, timeout "
                + o.heartbeatTimeoutMs() + " ms; " + o.settleMs() + " ms settling, " + o.cpuWindowMs()
                + " ms CPU window; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("N", "time to register all (s)", "coordinator heap after GC (MB)", "heap per worker (KB)",
                "coordinator threads (0 -> N workers)", "coordinator CPU idle-heartbeating (% of one core)",
                "heartbeats/s received", "worker-side JVM CPU (%)", "workers held"), rows);
        report.line("");
        report.line("Busiest coordinator threads during the CPU window (last run, % of one core):");
        report.line("");
        busiest.forEach(report::line);
        report.line("");
        report.line("Target (10,000 workers, constant threads, < 20 KB heap per worker): "
                + (allMet ? "met" : "not met") + ".");
        if (o.profile()) {
            int n = o.ns().get(o.ns().size() - 1);
            report.progress("profiling: one more run of N=" + n + ", not counted (JFR adds threads of its own)");
            once(ctx, report, o, n, o.runs(), true);
        }
        return 0;
    }

    private static Run once(BenchContext ctx, Report report, Options o, int n, int r, boolean profile)
            throws Exception {
        String suffix = "-" + n + "-" + (r + 1);
        try (Child coordinator = Child.start(ctx, "scale-coordinator" + suffix, ScaleCoordinator.class, List.of(),
                List.of(Long.toString(o.heartbeatMs()), Long.toString(o.heartbeatTimeoutMs())))) {
            int port = coordinator.expect("READY", Duration.ofSeconds(30)).intValue("port");
            coordinator.send("stats");
            Kv before = coordinator.expect("STATS", Duration.ofSeconds(60));
            try (Child workers = Child.start(ctx, "many-workers" + suffix, ManyWorkers.class, List.of(),
                    List.of(Integer.toString(port), Integer.toString(n), Long.toString(o.heartbeatMs()),
                            Integer.toString(o.connectParallel()), "120000"))) {
                Path registrationJfr = ctx.logDir().resolve("scale-registration-" + n + ".jfr");
                if (profile) {
                    Jcmd.startRecording(coordinator.pid());
                }
                workers.send("connect");
                Kv connected = workers.expect("CONNECTED", Duration.ofSeconds(150));
                if (profile) {
                    Jcmd.stopRecording(coordinator.pid(), registrationJfr);
                }
                if (connected.intValue("registered") != n) {
                    throw new IllegalStateException("only " + connected.intValue("registered") + " of " + n
                            + " workers registered: " + connected.values());
                }
                coordinator.send(Kv.line("wait-pool", "n", n, "timeoutMs", 30000));
                Kv pool = coordinator.expect("POOL", Duration.ofSeconds(60));
                if (pool.intValue("size") != n) {
                    throw new IllegalStateException("the coordinator's pool holds " + pool.intValue("size") + " of "
                            + n + " workers 30 s after they all got registered");
                }
                Thread.sleep(o.settleMs());
                coordinator.send("stats");
                Kv after = coordinator.expect("STATS", Duration.ofSeconds(60));
                workers.send("stats");
                long hb0 = workers.expect("STATS", Duration.ofSeconds(10)).longValue("heartbeatsSent");
                long w0 = workers.cpuNanos();
                long t0 = System.nanoTime();
                coordinator.send(Kv.line("cpu", "windowMs", o.cpuWindowMs()));
                Path idlePerf = ctx.logDir().resolve("scale-idle-" + n + ".perf.data");
                Perf.Session perf = profile && Perf.available()
                        ? Perf.record(coordinator.pid(), Math.max(1, o.cpuWindowMs() / 1000 - 1), idlePerf) : null;
                Kv cpu = coordinator.expect("CPU", Duration.ofMillis(o.cpuWindowMs() + 60_000));
                long w1 = workers.cpuNanos();
                long t1 = System.nanoTime();
                workers.send("stats");
                long hb1 = workers.expect("STATS", Duration.ofSeconds(10)).longValue("heartbeatsSent");
                if (profile) {
                    JfrSummary.print(report, registrationJfr, "coordinator while " + n + " workers register", 20);
                    if (perf != null) {
                        perf.output();
                        Jcmd.run(coordinator.pid(), "Compiler.perfmap");
                        report.line("");
                        report.line("CPU samples of the coordinator while " + n + " workers heartbeat (perf record,"
                                + " user + kernel):");
                        report.line("");
                        report.table(List.of("self", "object", "symbol"), Perf.report(idlePerf, 25));
                    }
                }
                double heapBytes = after.longValue("heapBytes");
                return new Run(connected.longValue("nanos") / 1e9, heapBytes / 1e6,
                        (heapBytes - before.longValue("heapBytes")) / n, before.intValue("threads"),
                        after.intValue("threads"), 100.0 * cpu.longValue("cpuNanos") / cpu.longValue("wallNanos"),
                        100.0 * (w1 - w0) / (t1 - t0), cpu.intValue("pool"), cpu.intValue("lost"),
                        (hb1 - hb0) * 1e9 / (t1 - t0), cpu.get("threads"));
            }
        }
    }
}
