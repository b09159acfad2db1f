package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Jcmd;
import dev.panoptes.bench.harness.JfrSummary;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Perf;
import dev.panoptes.bench.harness.ProductCli;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.SuiteFiles;
import dev.panoptes.bench.model.StubModelNode;

import org.sqlite.SQLiteConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Measurement 5, end to end: the real {@code coordinator} command and real worker processes
 * ({@code java -jar worker.jar --coordinator ...}; 4 of capacity 8 by default) against the
 * product's stub model ({@link StubModelNode}) with a fixed latency, each in its own JVM. The ceiling is
 * workers x capacity / latency vignettes per second (every slot always waiting on a model call).
 *
 * <p>The rate is read from outside, without trusting the product's own figures: the parent
 * polls the result database (read-only, WAL lets it read while the coordinator writes) and
 * takes the slope of stored records between 10 % and 90 % of the run, once every worker has
 * registered (the steady state), and also the whole run, from the moment the coordinator listens
 * to the last record. The workers are started once and kept across runs, as long-lived workers
 * are in production: each run is a new {@code coordinator} command on the same port, and they
 * reconnect to it; a first run of a quarter of the vignettes warms them up and is not counted.
 * Then the store's own rate ({@link StoreBench}) is measured directly, and reported by
 * {@link #reportStore}, which the {@code store} command shares.
 *
 * <p>The parent's main thread starts, polls and stops every process; nothing here is shared.
 */
public final class E2eBench {
    /** How to run it: the options of the {@code e2e} command. */
    public record Options(int runs, int vignettes, int workers, int capacity, long latencyMs, int jobSize, Path workerJar,
                   int storeOutcomes, boolean stubNoDelay, boolean profile) {
    }

    private record Run(double steadyRate, double wholeRate, long records, int exitCode, double coordinatorCpuUsPerV,
                       double workerCpuUsPerV, double stubCpuUsPerV, double wallSeconds, String summary) {
    }

    private static final long POLL_MS = 100;

    private E2eBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        ProductCli cli = new ProductCli(o.workerJar());
        double limit = o.workers() * o.capacity() * 1000.0 / o.latencyMs();
        Path dir = Files.createTempDirectory("panoptes-e2e-bench");
        List<Run> runs = new ArrayList<>();
        try {
            Path suite = dir.resolve("suite.jsonl");
            SuiteFiles.writeArithmetic(suite, o.vignettes());
            // The JDK's HttpServer leaves Nagle on unless told (sun.net.httpserver.nodelay): its
            // response headers and body then leave as two segments, the body waiting for the
            // client's delayed ACK of the headers, about 40 ms on Linux. A model server with a
            // "fixed 50 ms latency" must not add that. StubModelServer turns it off itself since
            // eb744b7 unless the property is set; --stub-nagle sets it to false to show the cost.
            Child stub = Child.start(ctx, "stub-model", StubModelNode.class,
                    List.of("-Dsun.net.httpserver.nodelay=" + o.stubNoDelay()),
                    List.of(Long.toString(o.latencyMs()), Integer.toString(4 * o.workers() * o.capacity())));
            String url = stub.expect("READY", Duration.ofSeconds(30)).get("url");
            report.progress(String.format(Locale.ROOT, "stub model at %s (%d ms per call, TCP_NODELAY %s); %d workers x"
                    + " capacity %d; limit %.0f vignettes/s; %,d vignettes per run; binary %s", url, o.latencyMs(),
                    o.stubNoDelay() ? "on" : "off (Nagle on, as shipped before eb744b7)", o.workers(), o.capacity(), limit, o.vignettes(),
                    cli.describe()));
            int port = ProductCli.freePort();
            List<Child> workers = new ArrayList<>();
            report.progress("warm-up: one run of " + o.vignettes() / 4 + " vignettes, not counted");
            Path warm = dir.resolve("warmup.jsonl");
            SuiteFiles.writeArithmetic(warm, o.vignettes() / 4);
            once(ctx, cli, o, warm, o.vignettes() / 4, dir.resolve("warmup"), url, port, workers, stub);
            for (int r = 1; r <= o.runs(); r++) {
                Run run = once(ctx, cli, o, suite, o.vignettes(), dir.resolve("run" + r), url, port, workers, stub);
                runs.add(run);
                report.progress(String.format(Locale.ROOT, "run %d: steady %.1f vignettes/s (%.1f%% of the limit),"
                        + " whole run %.1f/s, %d records, exit %d; CPU per vignette: coordinator %.0f us, workers"
                        + " %.0f us, stub model %.0f us [load %.2f]", r, run.steadyRate(), 100 * run.steadyRate() / limit,
                        run.wholeRate(), run.records(), run.exitCode(), run.coordinatorCpuUsPerV(),
                        run.workerCpuUsPerV(), run.stubCpuUsPerV(), Machine.loadAverage()));
            }
            if (o.profile()) {
                report.progress("profiling: one more run, not counted");
                once(ctx, cli, o, suite, o.vignettes(), dir.resolve("profiled"), url, port, workers, stub, report);
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        Stats steady = Stats.of(runs.stream().map(Run::steadyRate).toList());
        Stats whole = Stats.of(runs.stream().map(Run::wholeRate).toList());
        report.line("");
        report.line("### e2e (" + runs.size() + " runs after one warm-up run; the real coordinator command and "
                + o.workers() + " real worker processes, capacity " + o.capacity() + ", job size " + o.jobSize()
                + ", stub model " + o.latencyMs() + " ms per call" + (o.stubNoDelay() ? " with TCP_NODELAY"
                : " with Nagle on (--stub-nagle)") + "; " + o.vignettes() + " vignettes per run; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ". Binary: `" + cli.describe() + "`.");
        report.line("");
        report.table(List.of("measure", "vignettes/s", "of the limit " + String.format(Locale.ROOT, "%.0f/s", limit)),
                List.of(List.of("steady state (10 % to 90 % of the records, all workers registered)", steady.format(1),
                                String.format(Locale.ROOT, "%.1f %% (%.1f-%.1f)", 100 * steady.median() / limit,
                                        100 * steady.min() / limit, 100 * steady.max() / limit)),
                        List.of("whole run (coordinator listening to last record)", whole.format(1),
                                String.format(Locale.ROOT, "%.1f %% (%.1f-%.1f)", 100 * whole.median() / limit,
                                        100 * whole.min() / limit, 100 * whole.max() / limit))));
        report.line("");
        double coordinatorUs = Stats.of(runs.stream().map(Run::coordinatorCpuUsPerV).toList()).median();
        double workersUs = Stats.of(runs.stream().map(Run::workerCpuUsPerV).toList()).median();
        double stubUs = Stats.of(runs.stream().map(Run::stubCpuUsPerV).toList()).median();
        report.line(String.format(Locale.ROOT, "CPU per vignette (median, from /proc): coordinator %.0f us, the %d"
                        + " workers together %.0f us, the stub model %.0f us. At the limit of %.0f vignettes/s that"
                        + " is %.2f cores of the %d this machine has (the stub model would be elsewhere in"
                        + " production).", coordinatorUs, o.workers(), workersUs, stubUs, limit,
                (coordinatorUs + workersUs + stubUs) * limit / 1e6, Machine.cores()));
        report.line("");
        report.line("The coordinator's own summary of the last run:");
        report.line("");
        report.line("```");
        report.line(runs.get(runs.size() - 1).summary());
        report.line("```");
        report.line("");
        report.line(String.format(Locale.ROOT, "Target (at least 95 %% of the limit, steady state): %.1f %%: %s.",
                100 * steady.median() / limit, steady.median() >= 0.95 * limit ? "met" : "not met"));

        List<StoreBench.Result> store = StoreBench.measure(report, Math.max(3, o.runs()), o.storeOutcomes(), 1000);
        reportStore(report, store, o.storeOutcomes());
        return 0;
    }

    private static Run once(BenchContext ctx, ProductCli cli, Options o, Path suite, long total, Path runDir,
                            String url, int port, List<Child> workers, Child stub) throws Exception {
        return once(ctx, cli, o, suite, total, runDir, url, port, workers, stub, null);
    }

    private static Run once(BenchContext ctx, ProductCli cli, Options o, Path suite, long total, Path runDir,
                            String url, int port, List<Child> workers, Child stub, Report profile)
            throws Exception {
        Files.createDirectories(runDir);
        String name = runDir.getFileName().toString();
        Path db = runDir.resolve("results.db");
        String coordinatorName = "e2e-coordinator-" + name;
        Path coordinatorLog = ctx.logDir().resolve(coordinatorName + ".log");
        try (Child coordinator = Child.startCommand(ctx, coordinatorName, cli.command(ctx.coordinatorJvmArgs(),
                List.of("coordinator", "--listen", "127.0.0.1:" + port, "--suite", suite.toString(), "--model",
                        "stub", "--db", db.toString(), "--job-size", Integer.toString(o.jobSize()))))) {
            ProductCli.awaitListening(port, 60_000, coordinator);
            long start = System.nanoTime();
            long coordinatorCpu0 = coordinator.cpuNanos();
            long coordinatorCpu = coordinatorCpu0;
            if (workers.isEmpty()) {
                // Started once and kept: workers are long-lived processes that reconnect to each new
                // coordinator on the same port, as in production; their JIT stays warm.
                for (int i = 1; i <= o.workers(); i++) {
                    workers.add(Child.startCommand(ctx, "e2e-worker-" + i, cli.command(List.of(),
                            List.of("--coordinator", "127.0.0.1:" + port, "--model-api", url, "--model", "stub",
                                    "--capacity", Integer.toString(o.capacity()), "--requests", Integer.toString(o.capacity()),
                                    "--id", "e2e-worker-" + i))));
                }
            }
            long workerCpu0 = cpu(workers);
            long stubCpu0 = stub.cpuNanos();
            Path workerJfr = ctx.logDir().resolve("e2e-worker-1.jfr");
            List<Perf.Session> perf = new ArrayList<>();
            List<Path> perfData = new ArrayList<>();
            if (profile != null) {
                Jcmd.startRecording(workers.get(0).pid());
            }
            List<long[]> timeline = new ArrayList<>();
            long allRegisteredNanos = -1;
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (coordinator.isAlive() && System.nanoTime() - deadline < 0) {
                long count = countRecords(db);
                long now = System.nanoTime();
                timeline.add(new long[] {now, count});
                long cpu = coordinator.cpuNanos();
                if (cpu >= 0) {
                    coordinatorCpu = cpu;
                }
                if (allRegisteredNanos < 0 && registrations(coordinatorLog) >= o.workers()) {
                    allRegisteredNanos = now;
                    if (profile != null && Perf.available()) {
                        for (Child c : List.of(workers.get(0), coordinator, stub)) {
                            Path data = ctx.logDir().resolve("e2e-" + c.name() + ".perf.data");
                            perfData.add(data);
                            perf.add(Perf.record(c.pid(), 4, data));
                        }
                    }
                }
                if (!perf.isEmpty() && now - allRegisteredNanos > 4_500_000_000L) {
                    // perf is done with them: name their JIT frames while every process still lives.
                    perf.forEach(Perf.Session::output);
                    perf.clear();
                    for (Child c : List.of(workers.get(0), coordinator, stub)) {
                        try {
                            Jcmd.run(c.pid(), "Compiler.perfmap");
                        } catch (IllegalStateException e) {
                            profile.progress("no perf map for " + c.name() + ": " + e.getMessage());
                        }
                    }
                }
                if (count >= total) {
                    break;
                }
                Thread.sleep(POLL_MS);
            }
            if (profile != null) {
                perf.forEach(Perf.Session::output);
                Jcmd.stopRecording(workers.get(0).pid(), workerJfr);
                JfrSummary.print(profile, workerJfr, "worker process e2e-worker-1 during a run", 25);
                List<Child> profiled = List.of(workers.get(0), coordinator, stub);
                for (int i = 0; i < perfData.size(); i++) {
                    profile.line("");
                    profile.line("CPU samples of " + profiled.get(i).name() + " (perf record, user + kernel, 4 s):");
                    profile.line("");
                    profile.table(List.of("self", "object", "symbol"), Perf.report(perfData.get(i), 20));
                }
            }
            long workerCpu = cpu(workers) - workerCpu0;
            long stubCpu = stub.cpuNanos() - stubCpu0;
            long end = System.nanoTime();
            int exit = coordinator.waitFor(Duration.ofSeconds(60));
            long records = countRecords(db);
            timeline.add(new long[] {System.nanoTime(), records});
            String summary = String.join("\n", coordinator.drainLines());
            if (records < total || exit != 0) {
                throw new IllegalStateException("the run stored " + records + " of " + total + " records (exit "
                        + exit + "); see " + ctx.logDir());
            }
            long lastRecordNanos = firstReaching(timeline, total);
            return new Run(steadyRate(timeline, total, allRegisteredNanos), total * 1e9 / (lastRecordNanos - start),
                    records, exit, (coordinatorCpu - coordinatorCpu0) / 1e3 / total, workerCpu / 1e3 / total,
                    stubCpu / 1e3 / total, (end - start) / 1e9, summary);
        }
    }

    private static long cpu(List<Child> children) {
        long total = 0;
        for (Child c : children) {
            total += Math.max(0, c.cpuNanos());
        }
        return total;
    }

    /** Workers the coordinator has reported registered so far, from its log (stderr). */
    public static int registrations(Path log) {
        try {
            String text = Files.readString(log);
            int n = 0;
            for (int at = text.indexOf(" registered from "); at >= 0; at = text.indexOf(" registered from ", at + 1)) {
                n++;
            }
            return n;
        } catch (java.io.IOException e) {
            return 0;
        }
    }

    /**
     * Records per second between the polls where 10 % and 90 % of {@code total} were first stored,
     * starting no earlier than the moment every worker had registered (if that was later).
     */
    public static double steadyRate(List<long[]> timeline, long total, long allRegisteredNanos) {
        long[] from = null;
        long[] to = null;
        for (long[] point : timeline) {
            if (from == null && point[1] >= total / 10 && point[0] >= allRegisteredNanos) {
                from = point;
            }
            if (to == null && point[1] >= total * 9 / 10) {
                to = point;
            }
        }
        if (from == null || to == null || to[0] == from[0]) {
            throw new IllegalStateException("too few samples to measure a steady rate");
        }
        return (to[1] - from[1]) * 1e9 / (to[0] - from[0]);
    }

    private static long firstReaching(List<long[]> timeline, long total) {
        for (long[] point : timeline) {
            if (point[1] >= total) {
                return point[0];
            }
        }
        return timeline.get(timeline.size() - 1)[0];
    }

    /** Stored records, read-only; 0 while the coordinator has not created the table yet. */
    public static long countRecords(Path db) {
        if (!Files.exists(db)) {
            return 0;
        }
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(1000);
        try (Connection c = config.createConnection("jdbc:sqlite:" + db.toAbsolutePath());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_records")) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            return 0; // not created yet, or busy for a moment: the next poll sees it
        }
    }

    /** Reports the store micro-measurement. */
    public static void reportStore(Report report, List<StoreBench.Result> results, int outcomes) {
        Stats records = Stats.of(results.stream().map(StoreBench.Result::recordsPerSecond).toList());
        Stats perOutcome = Stats.of(results.stream().map(StoreBench.Result::microsPerOutcome).toList());
        report.line("");
        report.line("### JdbcResultStore on SQLite (" + results.size() + " runs of " + outcomes
                + " outcomes x 8 records, one transaction per outcome, fresh database per run, after a warm-up run;"
                + " median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("records/s", "outcomes/s", "us per outcome (8 records)"), List.of(List.of(
                records.formatRate(),
                Stats.of(results.stream().map(StoreBench.Result::outcomesPerSecond).toList()).formatRate(),
                perOutcome.format(0))));
        report.line("");
        report.line(String.format(Locale.ROOT, "One thread stores %,.0f records/s: the store alone would cap a run at"
                + " that many vignettes per second.", records.median()));
    }
}
