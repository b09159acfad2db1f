package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Jcmd;
import dev.panoptes.bench.harness.JfrSummary;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Perf;
import dev.panoptes.bench.harness.Report;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static dev.panoptes.bench.dispatch.DispatchBench.ROUND_TIMEOUT;
import static dev.panoptes.bench.dispatch.DispatchBench.round;

/**
 * The {@code --profile} part of the dispatch measurements: after the measured runs, more rounds on
 * the same coordinator and worker JVMs, looked at from outside. One round under JFR (where each
 * JVM's Java time goes), one under {@code perf record} (CPU of every thread, kernel included, which
 * JFR cannot see), one per K under {@code perf stat} (syscalls and context switches per job) and
 * one under {@code perf trace} (the coordinator's syscall mix). Without perf only the JFR part runs.
 *
 * <p>Its figures are not the measurement's: profiling slows the rounds, so the report gives their
 * shares and counts per job, not their rates. Called on the parent's main thread, which drives
 * both children.
 */
final class DispatchProfile {
    private DispatchProfile() {
    }

    static void run(BenchContext ctx, Report report, DispatchBench.Options o, Child driver, Child worker)
            throws Exception {
        report.progress("profiling: a " + o.profileMs() + " ms round at K=" + o.profileK() + " under JFR");
        Jcmd.startRecording(driver.pid());
        Jcmd.startRecording(worker.pid());
        DispatchBench.Round r = round(driver, worker, o.profileK(), 1000, o.profileMs());
        Path coordinatorJfr = ctx.logDir().resolve("coordinator.jfr");
        Path workerJfr = ctx.logDir().resolve("worker.jfr");
        Jcmd.stopRecording(driver.pid(), coordinatorJfr);
        Jcmd.stopRecording(worker.pid(), workerJfr);
        report.line("");
        report.line(String.format(Locale.ROOT, "Profiled round (K=%d, %s): %,.0f jobs/s under JFR; recordings: %s, %s",
                o.profileK(), o.mode().label, r.jobsPerSecond(), coordinatorJfr, workerJfr));
        JfrSummary.print(report, coordinatorJfr, "coordinator JVM, K=" + o.profileK(), 25);
        JfrSummary.print(report, workerJfr, o.mode().label + " JVM, K=" + o.profileK(), 15);
        if (!Perf.available()) {
            report.line("(perf is not available here: no CPU samples with kernel time, no syscall counts.)");
            return;
        }
        cpuProfile(ctx, report, o, driver, worker);
        List<List<String>> rows = new ArrayList<>();
        for (int k : o.ks()) {
            rows.add(perfRound(report, driver, worker, k));
        }
        report.line("");
        report.line("Syscalls and context switches per job (perf stat over 4 s of a 6 s round at each K, outside"
                + " JFR; jobs counted from the round's rate):");
        report.line("");
        report.table(List.of("K", "jobs/s", "coordinator syscalls/job", "coordinator context switches/job",
                "worker syscalls/job", "worker context switches/job"), rows);
        report.line("");
        report.line("Coordinator syscall mix at K=" + o.profileK() + " (perf trace -s over 2 s; tracing slows the"
                + " run, so read the shares, not the rate):");
        report.line("");
        driver.send(Kv.line("run", "k", o.profileK(), "warmupMs", 500, "measureMs", 4000));
        driver.expect("MEASURE-START", ROUND_TIMEOUT);
        Perf.Session trace = Perf.trace(driver.pid(), 2);
        Map<String, Long> calls = Perf.syscalls(trace.output());
        driver.expect("RESULT", ROUND_TIMEOUT);
        long total = calls.values().stream().mapToLong(Long::longValue).sum();
        List<List<String>> mix = new ArrayList<>();
        for (Map.Entry<String, Long> e : calls.entrySet()) {
            if (mix.size() == 10) {
                break;
            }
            mix.add(List.of(e.getKey(), String.format(Locale.ROOT, "%,d", e.getValue()),
                    String.format(Locale.ROOT, "%.1f%%", 100.0 * e.getValue() / Math.max(1, total))));
        }
        report.table(List.of("syscall", "calls", "share"), mix);
    }

    /**
     * A round with perf record sampling both JVMs' CPU, user and kernel, every thread (JFR sees
     * only threads running Java code; a selector thread's time in syscalls is invisible to it).
     */
    private static void cpuProfile(BenchContext ctx, Report report, DispatchBench.Options o, Child driver,
                                   Child worker) throws Exception {
        Path coordinatorData = ctx.logDir().resolve("coordinator.perf.data");
        Path workerData = ctx.logDir().resolve("worker.perf.data");
        driver.send(Kv.line("run", "k", o.profileK(), "warmupMs", 1000, "measureMs", 6000));
        driver.expect("MEASURE-START", ROUND_TIMEOUT);
        Perf.Session c = Perf.record(driver.pid(), 4, coordinatorData);
        Perf.Session w = Perf.record(worker.pid(), 4, workerData);
        c.output();
        w.output();
        driver.expect("MEASURE-END", ROUND_TIMEOUT);
        Kv r = driver.expect("RESULT", ROUND_TIMEOUT);
        Jcmd.run(driver.pid(), "Compiler.perfmap");
        Jcmd.run(worker.pid(), "Compiler.perfmap");
        report.line("");
        report.line(String.format(Locale.ROOT, "CPU samples (perf record -F 999, user + kernel, all threads, 4 s"
                + " of a round at K=%d, %,.0f jobs/s; JIT frames named from the JVM's perf map):",
                o.profileK(), r.longValue("jobs") * 1e9 / r.longValue("nanos")));
        report.line("");
        report.line("Coordinator JVM:");
        report.line("");
        report.table(List.of("self", "object", "symbol"), Perf.report(coordinatorData, 30));
        report.line("");
        report.line(o.mode().label + " JVM:");
        report.line("");
        report.table(List.of("self", "object", "symbol"), Perf.report(workerData, 15));
    }

    /** A round with perf stat counting both JVMs' syscalls and context switches for 4 s of it. */
    private static List<String> perfRound(Report report, Child driver, Child worker, int k) throws Exception {
        driver.send(Kv.line("run", "k", k, "warmupMs", 1000, "measureMs", 6000));
        driver.expect("MEASURE-START", ROUND_TIMEOUT);
        Perf.Session cs = Perf.stat(driver.pid(), 4);
        Perf.Session ws = Perf.stat(worker.pid(), 4);
        Map<String, Long> c = Perf.counts(cs.output());
        Map<String, Long> w = Perf.counts(ws.output());
        driver.expect("MEASURE-END", ROUND_TIMEOUT);
        Kv r = driver.expect("RESULT", ROUND_TIMEOUT);
        double rate = r.longValue("jobs") * 1e9 / r.longValue("nanos");
        double jobs = rate * 4;
        report.progress(String.format(Locale.ROOT, "perf K=%d: %,.0f jobs/s, coordinator %s, worker %s", k, rate, c, w));
        return List.of(Integer.toString(k), String.format(Locale.ROOT, "%,.0f", rate),
                perJob(c, "raw_syscalls:sys_enter", jobs), perJob(c, "context-switches", jobs),
                perJob(w, "raw_syscalls:sys_enter", jobs), perJob(w, "context-switches", jobs));
    }

    private static String perJob(Map<String, Long> counts, String event, double jobs) {
        Long n = counts.get(event);
        return n == null ? "-" : String.format(Locale.ROOT, "%.2f", n / jobs);
    }
}
