package dev.panoptes.bench.cluster;

import dev.panoptes.bench.fake.BenchRunners;
import dev.panoptes.bench.fake.SessionWorker;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Jcmd;
import dev.panoptes.bench.harness.JfrSummary;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Perf;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.WakeupLatency;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Measurement 4, scheduling: the makespan of J jobs over workers of unequal speed (1x, 2x, 4x by
 * default: 4 ms, 2 ms and 1 ms of service time per job), run by the real scheduler in a
 * {@link SchedulingCoordinator} JVM over real {@code WorkerSession}s in a {@link SessionWorker}
 * JVM, against the ideal: total work / total speed, where a worker of capacity c and service
 * time t does c / t jobs per unit of time. The same run over in-process workers is measured too,
 * to separate what the scheduler decides from what the network adds.
 */
public final class SchedulingBench {
    /** How to run it: the options of the {@code scheduling} command. */
    public record Options(int runs, int jobs, List<Long> serviceMicros, int capacity, boolean profile, int warmupRuns,
                   boolean rawTimer) {
    }

    private SchedulingBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        List<String> specs = new ArrayList<>();
        double speed = 0;
        long slowest = o.serviceMicros().stream().mapToLong(Long::longValue).max().orElseThrow();
        for (int i = 0; i < o.serviceMicros().size(); i++) {
            long micros = o.serviceMicros().get(i);
            String id = "w" + (i + 1) + "-" + (slowest / micros) + "x";
            specs.add(id + ":" + o.capacity() + (o.rawTimer() ? ":rawsleep" : ":sleep") + micros);
            speed += (double) o.capacity() / micros; // jobs per microsecond
        }
        double idealMs = o.jobs() / speed / 1000;
        report.progress(String.format(Locale.ROOT, "workers %s; ideal makespan of %d jobs: %.1f ms", specs, o.jobs(),
                idealMs));
        double overshootUs = sleepOvershootMicros(1000);
        report.progress(String.format(Locale.ROOT, "this machine oversleeps a 1 ms park by %.0f us on average",
                overshootUs));
        // A remote job's round trip wakes one thread more than an in-process one's (the worker's
        // I/O thread, for the answer its runner finished): what that costs here, beside the result.
        WakeupLatency.Micros wakeup = WakeupLatency.measure(300);
        report.progress("waking a thread asleep in select takes " + wakeup);

        Child coordinator = Child.start(ctx, "scheduling-coordinator", SchedulingCoordinator.class, List.of(),
                List.of());
        int port = coordinator.expect("READY", Duration.ofSeconds(30)).intValue("port");
        List<String> args = new ArrayList<>(List.of(Integer.toString(port), "1000"));
        args.addAll(specs);
        Child workers = Child.start(ctx, "scheduling-workers", SessionWorker.class, List.of(), args);
        coordinator.send(Kv.line("await", "n", specs.size()));
        if (coordinator.expect("WORKERS", Duration.ofSeconds(60)).intValue("n") != specs.size()) {
            throw new IllegalStateException("not every worker registered");
        }

        report.progress("warm-up: " + o.warmupRuns() + " remote and local runs of " + o.jobs() + " jobs, not counted"
                + " (both JVMs' JIT must have compiled the whole path: a short warm-up overstates the overhead)");
        for (int i = 0; i < o.warmupRuns(); i++) {
            once(coordinator, "run", o.jobs(), null);
            once(coordinator, "run-local", o.jobs(), String.join(",", specs));
        }
        List<Double> remote = new ArrayList<>();
        List<Double> local = new ArrayList<>();
        Map<String, List<Double>> shares = new LinkedHashMap<>();
        for (int r = 1; r <= o.runs(); r++) {
            Kv rr = once(coordinator, "run", o.jobs(), null);
            Kv lr = once(coordinator, "run-local", o.jobs(), String.join(",", specs));
            double rm = rr.longValue("makespanNanos") / 1e6;
            double lm = lr.longValue("makespanNanos") / 1e6;
            remote.add(rm);
            local.add(lm);
            for (String pair : rr.get("by").split(",")) {
                String[] kv = pair.split(":");
                shares.computeIfAbsent(kv[0], x -> new ArrayList<>()).add(100.0 * Integer.parseInt(kv[1]) / o.jobs());
            }
            report.progress(String.format(Locale.ROOT, "run %d: remote %.1f ms (%.2f x ideal, %s), local %.1f ms"
                    + " (%.2f x ideal) [load %.2f]", r, rm, rm / idealMs, rr.get("by"), lm, lm / idealMs,
                    Machine.loadAverage()));
        }

        Stats rs = Stats.of(remote);
        Stats ls = Stats.of(local);
        report.line("");
        report.line("### scheduling (" + o.runs() + " runs after " + o.warmupRuns() + " warm-up runs; " + o.jobs()
                + " jobs; workers "
                + String.join(", ", specs) + " (id:capacity:service time in us); median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + String.format(Locale.ROOT,
                ". A 1 ms park oversleeps by %.0f us on average here; waking a thread asleep in select takes %s.",
                overshootUs, wakeup));
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("remote workers (separate JVM, real WorkerSession)", rs.format(1),
                String.format(Locale.ROOT, "%.1f", idealMs), Stats.of(remote.stream().map(x -> x / idealMs).toList())
                        .format(3)));
        rows.add(List.of("in-process LocalPool, same speeds (reference)", ls.format(1),
                String.format(Locale.ROOT, "%.1f", idealMs), Stats.of(local.stream().map(x -> x / idealMs).toList())
                        .format(3)));
        report.table(List.of("workers", "makespan (ms)", "ideal (ms)", "makespan / ideal"), rows);
        report.line("");
        StringBuilder sb = new StringBuilder("Share of jobs per worker (remote runs, median): ");
        for (Map.Entry<String, List<Double>> e : shares.entrySet()) {
            sb.append(e.getKey()).append(String.format(Locale.ROOT, " %.1f%%; ", Stats.of(e.getValue()).median()));
        }
        sb.append("ideal shares are proportional to speed.");
        report.line(sb.toString());
        report.line("");
        double remoteOverhead = fittedOverheadMicros(o, rs.median());
        double localOverhead = fittedOverheadMicros(o, ls.median());
        report.line(String.format(Locale.ROOT, "Fitted per-job overhead (the o for which sum(c / (t_i + o)) matches the"
                + " median makespan): remote %.0f us, local %.0f us per job per slot; with service times of %s us"
                + " that is what separates the makespan from the ideal.", remoteOverhead, localOverhead,
                o.serviceMicros()));
        report.line("");
        double ratio = rs.median() / idealMs;
        report.line(String.format(Locale.ROOT, "Target (makespan within 10 %% of the ideal): %.1f %% over: %s.",
                100 * (ratio - 1), ratio <= 1.10 ? "met" : "not met"));
        if (o.profile()) {
            profile(ctx, report, o, coordinator, workers);
        }
        return 0;
    }

    /** Three more remote runs under JFR, and three under perf, on both JVMs; not counted. */
    private static void profile(BenchContext ctx, Report report, Options o, Child coordinator, Child workers)
            throws Exception {
        Path cJfr = ctx.logDir().resolve("scheduling-coordinator.jfr");
        Path wJfr = ctx.logDir().resolve("scheduling-workers.jfr");
        Jcmd.startRecording(coordinator.pid());
        Jcmd.startRecording(workers.pid());
        for (int i = 0; i < 3; i++) {
            once(coordinator, "run", o.jobs(), null);
        }
        Jcmd.stopRecording(coordinator.pid(), cJfr);
        Jcmd.stopRecording(workers.pid(), wJfr);
        JfrSummary.print(report, cJfr, "scheduling coordinator (3 remote runs)", 20);
        JfrSummary.print(report, wJfr, "scheduling workers JVM (3 remote runs)", 12);
        if (!Perf.available()) {
            return;
        }
        Path cPerf = ctx.logDir().resolve("scheduling-coordinator.perf.data");
        Path wPerf = ctx.logDir().resolve("scheduling-workers.perf.data");
        Perf.Session c = Perf.record(coordinator.pid(), 2, cPerf);
        Perf.Session w = Perf.record(workers.pid(), 2, wPerf);
        Perf.Session cs = Perf.stat(coordinator.pid(), 2);
        Perf.Session ws = Perf.stat(workers.pid(), 2);
        long t0 = System.nanoTime();
        int jobs = 0;
        while (System.nanoTime() - t0 < 2_200_000_000L) {
            once(coordinator, "run", o.jobs(), null);
            jobs += o.jobs();
        }
        c.output();
        w.output();
        var cc = Perf.counts(cs.output());
        var wc = Perf.counts(ws.output());
        Jcmd.run(coordinator.pid(), "Compiler.perfmap");
        Jcmd.run(workers.pid(), "Compiler.perfmap");
        report.line("");
        report.line(String.format(Locale.ROOT, "perf stat over 2 s of back-to-back runs (about %d jobs): coordinator"
                + " %s, workers %s", jobs, cc, wc));
        report.line("");
        report.line("CPU samples, scheduling coordinator (perf record, user + kernel):");
        report.line("");
        report.table(List.of("self", "object", "symbol"), Perf.report(cPerf, 20));
        report.line("");
        report.line("CPU samples, workers JVM:");
        report.line("");
        report.table(List.of("self", "object", "symbol"), Perf.report(wPerf, 15));
    }

    /** Solves jobs / makespan = sum(c / (t_i + o)) for o, in microseconds, by bisection. */
    public static double fittedOverheadMicros(Options o, double makespanMs) {
        double rate = o.jobs() / (makespanMs * 1000); // jobs per microsecond
        double lo = 0;
        double hi = 1e6;
        for (int i = 0; i < 100; i++) {
            double mid = (lo + hi) / 2;
            double r = 0;
            for (long t : o.serviceMicros()) {
                r += o.capacity() / (t + mid);
            }
            if (r > rate) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    private static Kv once(Child coordinator, String command, int jobs, String workers) {
        coordinator.send(workers == null ? Kv.line(command, "jobs", jobs)
                : Kv.line(command, "jobs", jobs, "workers", workers));
        Kv r = coordinator.expect("RESULT", Duration.ofMinutes(5));
        if (r.intValue("completed") != jobs) {
            throw new IllegalStateException(command + " completed " + r.get("completed") + " of " + jobs + " jobs");
        }
        return r;
    }

    /** How much longer than asked a park of {@code micros} takes here, on average over 200 parks. */
    private static double sleepOvershootMicros(long micros) throws InterruptedException {
        long total = 0;
        int n = 200;
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            BenchRunners.waitFor(TimeUnit.MICROSECONDS.toNanos(micros));
            total += System.nanoTime() - t0 - TimeUnit.MICROSECONDS.toNanos(micros);
        }
        return total / 1e3 / n;
    }
}
