package dev.panoptes.bench.cluster;

import dev.panoptes.bench.fake.SessionWorker;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measurement 3, failure detection: a {@link FailureCoordinator} JVM, a survivor worker JVM, and
 * for each repetition a fresh victim worker JVM (the real {@code WorkerSession}) that holds its
 * share of a run's jobs when the parent either {@code kill -9}s it or {@code kill -STOP}s it.
 * The parent stamps the signal on the machine's monotonic clock; the coordinator stamps each step
 * of the recovery on the same clock.
 *
 * <p>Targets: killed, its jobs fail and are redispatched within 50 ms; stopped (frozen), it is
 * reaped within the heartbeat timeout + 10 %.
 */
public final class FailureBench {
    /** How to run it: the options of the {@code failure} command. */
    public record Options(int killRuns, int stopRuns, long heartbeatMs, long heartbeatTimeoutMs, int capacity) {
    }

    private record Rep(double goneMs, double lostMs, double failMaxMs, double retryMaxMs, double redispatchMaxMs,
                       double completeMaxMs, int victimJobs, int redeliveries) {
    }

    private FailureBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        Child coordinator = Child.start(ctx, "failure-coordinator", FailureCoordinator.class, List.of(),
                List.of(Long.toString(o.heartbeatMs()), Long.toString(o.heartbeatTimeoutMs())));
        int port = coordinator.expect("READY", Duration.ofSeconds(30)).intValue("port");
        Child survivor = Child.start(ctx, "survivor", SessionWorker.class, List.of(),
                List.of(Integer.toString(port), Long.toString(o.heartbeatMs()), "survivor:" + o.capacity() + ":echo"));
        await(coordinator, 1);

        report.progress("warm-up: one kill -9 repetition, not counted");
        rep(ctx, coordinator, port, o, "warmup", false);
        List<Rep> kills = new ArrayList<>();
        for (int i = 1; i <= o.killRuns(); i++) {
            Rep r = rep(ctx, coordinator, port, o, "kill-" + i, false);
            kills.add(r);
            report.progress(describe("kill -9", i, r));
        }
        List<Rep> stops = new ArrayList<>();
        for (int i = 1; i <= o.stopRuns(); i++) {
            Rep r = rep(ctx, coordinator, port, o, "stop-" + i, true);
            stops.add(r);
            report.progress(describe("SIGSTOP", i, r));
        }
        survivor.close();

        double killTarget = 50;
        double stopTarget = o.heartbeatTimeoutMs() * 1.1;
        report.line("");
        report.line("### failure (" + o.killRuns() + " kill -9 and " + o.stopRuns() + " SIGSTOP repetitions after one"
                + " warm-up; heartbeat " + o.heartbeatMs() + " ms, timeout " + o.heartbeatTimeoutMs() + " ms; victim"
                + " holds " + o.capacity() + " jobs; milliseconds after the signal, median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        rows.add(row("kill -9", kills));
        rows.add(row("SIGSTOP", stops));
        report.table(List.of("signal", "victim process gone (JDK reaper)", "connection lost (onLost)", "last job future failed", "last job seen by"
                + " scheduler (onRetry)", "last job redispatched", "last redispatched job completed"), rows);
        report.line("");
        if (!kills.isEmpty()) {
            double m = Stats.of(kills.stream().map(Rep::redispatchMaxMs).toList()).median();
            report.line(String.format(Locale.ROOT, "- kill -9 -> all held jobs failed and redispatched: %.1f ms"
                    + " (target < %.0f ms): %s", m, killTarget, m < killTarget ? "met" : "not met"));
        }
        if (!stops.isEmpty()) {
            double m = Stats.of(stops.stream().map(Rep::lostMs).toList()).median();
            double worst = Stats.of(stops.stream().map(Rep::lostMs).toList()).max();
            report.line(String.format(Locale.ROOT, "- SIGSTOP -> reaped: %.0f ms, worst %.0f ms (target <= %.0f ms ="
                            + " timeout + 10 %%): %s", m, worst, stopTarget,
                    worst <= stopTarget ? "met" : "not met"));
        }
        return 0;
    }

    private static List<String> row(String signal, List<Rep> reps) {
        if (reps.isEmpty()) {
            return List.of(signal, "-", "-", "-", "-", "-", "-");
        }
        boolean gone = reps.stream().noneMatch(x -> Double.isNaN(x.goneMs()));
        return List.of(signal, gone ? Stats.of(reps.stream().map(Rep::goneMs).toList()).format(1) : "(stopped, not gone)",
                Stats.of(reps.stream().map(Rep::lostMs).toList()).format(1),
                Stats.of(reps.stream().map(Rep::failMaxMs).toList()).format(1),
                Stats.of(reps.stream().map(Rep::retryMaxMs).toList()).format(1),
                Stats.of(reps.stream().map(Rep::redispatchMaxMs).toList()).format(1),
                Stats.of(reps.stream().map(Rep::completeMaxMs).toList()).format(1));
    }

    private static String describe(String what, int i, Rep r) {
        return String.format(Locale.ROOT, "%s #%d: process gone %.1f ms, lost %.1f ms, failed %.1f, retry %.1f,"
                        + " redispatched %.1f, completed %.1f ms (%d jobs held, %d redeliveries) [load %.2f]", what, i,
                r.goneMs(), r.lostMs(),
                r.failMaxMs(), r.retryMaxMs(), r.redispatchMaxMs(), r.completeMaxMs(), r.victimJobs(),
                r.redeliveries(), Machine.loadAverage());
    }

    private static Rep rep(BenchContext ctx, Child coordinator, int port, Options o, String name, boolean stop)
            throws InterruptedException {
        String victimId = "victim-" + name;
        Child victim = Child.start(ctx, victimId, SessionWorker.class, List.of(),
                List.of(Integer.toString(port), Long.toString(o.heartbeatMs()), victimId + ":" + o.capacity() + ":hold"));
        try {
            await(coordinator, 2);
            coordinator.send(Kv.line("start-run", "jobs", 2 * o.capacity(), "victim", victimId));
            Kv held = coordinator.expect("HELD", Duration.ofSeconds(60));
            if (held.intValue("n") != o.capacity()) {
                throw new IllegalStateException("the victim holds " + held.get("n") + " jobs, not " + o.capacity());
            }
            // Let the assigns reach the worker's job threads: it really holds them when the signal comes.
            Thread.sleep(200);
            // When the kernel has finished tearing the victim down (its sockets close during that), as
            // seen by the JDK's process reaper: the part of the delay that is not the coordinator's.
            java.util.concurrent.atomic.AtomicLong goneAt = new java.util.concurrent.atomic.AtomicLong(-1);
            if (!stop) {
                victim.process().onExit().thenRun(() -> goneAt.set(System.nanoTime()));
            }
            long t0 = stop ? victim.signal("STOP") : victim.kill9();
            coordinator.send(Kv.line("lost", "t0", t0));
            Kv r = coordinator.expect("RESULT", Duration.ofMillis(o.heartbeatTimeoutMs() + 60_000));
            if (r.intValue("failed") != 0) {
                throw new IllegalStateException("jobs failed for good in repetition " + name + ": " + r.values());
            }
            long gone = goneAt.get();
            return new Rep(gone < 0 ? Double.NaN : (gone - t0) / 1e6, r.longValue("lostNanos") / 1e6, r.longValue("failMaxNanos") / 1e6,
                    r.longValue("retryMaxNanos") / 1e6, r.longValue("redispatchMaxNanos") / 1e6,
                    r.longValue("completeMaxNanos") / 1e6, r.intValue("victimJobs"), r.intValue("redeliveries"));
        } finally {
            victim.kill9(); // SIGKILL also ends a stopped process
            victim.close();
            await(coordinator, 1);
        }
    }

    private static void await(Child coordinator, int n) {
        coordinator.send(Kv.line("await", "n", n));
        Kv w = coordinator.expect("WORKERS", Duration.ofSeconds(90));
        if (w.intValue("n") != n) {
            throw new IllegalStateException("the pool holds " + w.get("n") + " workers, expected " + n);
        }
    }
}
