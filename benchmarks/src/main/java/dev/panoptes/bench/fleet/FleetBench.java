package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.AsyncProfile;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.ProductCli;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.SuiteFiles;
import dev.panoptes.bench.harness.ThreadCpu;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Measurement 15 (issue 32), a simulated fleet: the real {@code coordinator} command of one or more
 * builds ({@code java -jar worker.jar coordinator}, SQLite or PostgreSQL) runs a generated suite
 * against a {@link FakeFleet} in one other JVM (1,000 connections of capacity 64 by default,
 * answering after a set latency or at once), so that what is measured is the coordinator's own
 * cost per stored answer: its CPU over the whole run (start-up, planning and the summary
 * included) and in the steady state (from 20 % to 80 % of the answers stored, per thread, with
 * context switches; {@link ThreadCpu}), answers/s, peak heap and RSS, and the time to first
 * dispatch. Builds alternate within each round, so that two builds meet the same machine.
 *
 * <p>The parent's main thread starts, polls and stops every process; nothing here is shared.
 */
public final class FleetBench {
    /** How to run it: the options of the {@code fleet} command. */
    public record Options(List<Path> builds, int runs, int vignettes, int connections, int capacity,
                          List<Long> latenciesMs, List<Integer> jobSizes, String db, Path dbPasswordFile,
                          int fleetThreads, long pollMs, Path asprof, String asprofEvent) {
    }

    /** One run's figures; CPU figures are microseconds per stored answer. */
    record Run(long stored, double wholeSeconds, double firstDispatchSeconds, double steadyRate,
               double steadyUs, double wholeUs, Map<String, Double> steadyUsByGroup, double voluntary,
               double involuntary, double peakHeapMb, double peakRssMb, double fleetSteadyUs, double fleetWholeUs,
               double serverSteadyUs, Map<String, ThreadCpu.Window> phases) {
    }

    /**
     * The phases of a run whose coordinator CPU is given apart, to see where the whole run's cost
     * outside the steady state goes: keyed by these names, in this order.
     */
    static final List<String> PHASES = List.of("start to first answer stored", "first answer to 20 %",
            "20 % to 80 %", "80 % to last answer", "last answer to exit");

    /** A poll: when, records stored, the coordinator's threads, the fleet's and the database server's CPU. */
    private record Poll(long nanos, long stored, ThreadCpu.Sample coordinator, long fleetCpu,
                        Map<Long, Long> serverCpu) {
    }

    private static final double FROM = 0.2;
    private static final double TO = 0.8;

    private FleetBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        Path dir = Files.createTempDirectory("panoptes-fleet-bench");
        Map<String, List<Run>> results = new LinkedHashMap<>();
        try {
            Path suite = dir.resolve("suite.jsonl");
            SuiteFiles.writeArithmetic(suite, o.vignettes());
            report.progress(String.format(Locale.ROOT, "%,d vignettes; fleet %,d connections x capacity %d, %d I/O"
                    + " thread(s); builds: %s", o.vignettes(), o.connections(), o.capacity(), o.fleetThreads(),
                    o.builds()));
            int seq = 0;
            for (int jobSize : o.jobSizes()) {
                for (long latency : o.latenciesMs()) {
                    for (int r = 1; r <= o.runs(); r++) {
                        for (Path build : o.builds()) {
                            String key = key(build, jobSize, latency);
                            boolean profile = o.asprof() != null && r == o.runs();
                            Run run = once(ctx, o, new ProductCli(build), suite, dir.resolve("run" + (++seq)), jobSize,
                                    latency, profile ? report : null, key);
                            results.computeIfAbsent(key, k -> new ArrayList<>()).add(run);
                            report.progress(String.format(Locale.ROOT, "%s round %d: %,.0f answers/s steady;"
                                    + " coordinator %.1f us/answer steady, %.1f whole run (%.1f s); %.2f vol cs/answer;"
                                    + " first dispatch %.2f s; fleet %.1f us/answer [load %.2f]", key, r,
                                    run.steadyRate(), run.steadyUs(), run.wholeUs(), run.wholeSeconds(),
                                    run.voluntary(), run.firstDispatchSeconds(), run.fleetSteadyUs(),
                                    Machine.loadAverage()));
                        }
                    }
                }
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        print(report, o, results);
        return 0;
    }

    private static String key(Path build, int jobSize, long latency) {
        return build + ", job size " + jobSize + ", latency " + latency + " ms";
    }

    private static Run once(BenchContext ctx, Options o, ProductCli cli, Path suite, Path runDir, int jobSize,
                            long latencyMs, Report profile, String key) throws Exception {
        Files.createDirectories(runDir);
        String name = runDir.getFileName().toString();
        int port = ProductCli.freePort();
        byte[] secret = new byte[16];
        new Random().nextBytes(secret);
        String token = HexFormat.of().formatHex(secret);
        Path gcLog = runDir.resolve("gc.log");
        try (FleetStore store = o.db().equals("sqlite") ? FleetStore.sqlite(runDir)
                : FleetStore.postgres(o.db(), o.dbPasswordFile(), "panoptes_fleet_" + ProcessHandle.current().pid()
                        + "_" + name);
             Child fleet = Child.start(ctx, "fleet-" + name, FakeFleet.class, List.of("-Xmx1g"),
                     List.of(Integer.toString(port), Integer.toString(o.connections()), Integer.toString(o.capacity()),
                             Long.toString(latencyMs), Integer.toString(o.fleetThreads()), token, "5000", "stub"))) {
            fleet.expect("READY", Duration.ofSeconds(30));
            List<String> jvm = new ArrayList<>(List.of("-Xlog:gc:file=" + gcLog));
            jvm.addAll(ctx.coordinatorJvmArgs());
            List<String> args = new ArrayList<>(List.of("coordinator", "--listen", "127.0.0.1:" + port, "--suite",
                    suite.toString(), "--model", "stub", "--job-size", Integer.toString(jobSize), "--token", token));
            args.addAll(store.dbArgs());
            long t0 = System.nanoTime();
            long fleetCpu0 = fleet.cpuNanos();
            try (Child coordinator = Child.startCommand(ctx, "fleet-coordinator-" + name, cli.command(jvm, args))) {
                fleet.send("connect");
                long pid = coordinator.pid();
                List<Poll> polls = new ArrayList<>();
                long peakRssKb = 0;
                boolean profiling = false;
                boolean profiled = false;
                long profiledFrom = 0;
                long profiledTo = 0;
                Path collapsed = ctx.logDir().resolve("fleet-" + name + ".collapsed");
                long deadline = t0 + Duration.ofMinutes(30).toNanos();
                while (true) {
                    long wait = polls.isEmpty() || polls.get(polls.size() - 1).stored() < o.vignettes() ? o.pollMs() : 10;
                    if (coordinator.process().waitFor(wait, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                        break;
                    }
                    if (!fleet.isAlive()) {
                        throw new IllegalStateException("the fake fleet ended mid-run (see " + ctx.logDir()
                                + "/fleet-" + name + ".log)");
                    }
                    ThreadCpu.Sample sample = ThreadCpu.sample(pid);
                    if (sample == null) {
                        continue; // exiting
                    }
                    peakRssKb = Math.max(peakRssKb, vmHwmKb(pid));
                    long stored = store.storedSoFar();
                    polls.add(new Poll(sample.nanos(), stored, sample, fleet.cpuNanos(), store.serverCpuNanos()));
                    if (profile != null && !profiling && !profiled && stored >= FROM * o.vignettes()) {
                        AsyncProfile.start(o.asprof(), pid, o.asprofEvent());
                        profiledFrom = store.storedSoFar();
                        profiling = true;
                    } else if (profiling && stored >= TO * o.vignettes()) {
                        AsyncProfile.stop(o.asprof(), pid, collapsed, o.asprofEvent());
                        profiledTo = store.storedSoFar();
                        profiling = false;
                        profiled = true;
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("the run " + name + " took over 30 minutes; see " + ctx.logDir());
                    }
                }
                long end = System.nanoTime();
                int exit = coordinator.process().exitValue();
                long fleetCpu = fleet.cpuNanos() - fleetCpu0;
                long stored = store.exactCount();
                if (exit != 0 || stored != o.vignettes()) {
                    throw new IllegalStateException("run " + name + " stored " + stored + " of " + o.vignettes()
                            + " answers and exited with " + exit + "; see " + ctx.logDir());
                }
                if (polls.size() < 2) {
                    throw new IllegalStateException("run " + name + " ended before two polls; raise --vignettes");
                }
                Kv first = fleet.expect("FIRST-ASSIGN", Duration.ofSeconds(5));
                Poll from = firstReaching(polls, (long) Math.ceil(FROM * stored));
                Poll to = firstReaching(polls, (long) Math.ceil(TO * stored));
                if (from == null || to == null || to.stored() <= from.stored() || to.nanos() == from.nanos()) {
                    throw new IllegalStateException("run " + name + " was too short for a steady window between "
                            + FROM + " and " + TO + " of its answers (polled every " + o.pollMs()
                            + " ms): raise --vignettes or lower --poll-ms");
                }
                long answers = to.stored() - from.stored();
                ThreadCpu.Window window = ThreadCpu.between(samples(polls, polls.indexOf(from), polls.indexOf(to)));
                Map<String, Double> byGroup = new LinkedHashMap<>();
                window.cpuByGroup().forEach((g, nanos) -> byGroup.put(g, nanos / 1e3 / answers));
                Poll last = polls.get(polls.size() - 1);
                double[] gc = SuiteBench.gcPeaksMb(gcLog);
                Map<String, ThreadCpu.Window> phases = phases(polls, t0, stored, from, to);
                if (profiled) {
                    profile.line("");
                    profile.line("### Where the coordinator's CPU or allocation goes in the steady state (" + key + "; async-profiler,"
                            + (o.asprofEvent().equals("alloc") ? " alloc, bytes" : " cpu, 1 ms") + ", per thread, "
                            + FROM * 100 + " % to " + TO * 100 + " % of the answers, about "
                            + (profiledTo - profiledFrom) + " answers stored while profiling)");
                    Function<String, String> group = ThreadCpu::group;
                    AsyncProfile.report(profile, collapsed, group, ThreadCpu.GROUPS, 12, o.asprofEvent(),
                            profiledTo - profiledFrom);
                    profile.line("");
                    profile.line("Collapsed stacks: " + collapsed);
                }
                return new Run(stored, (end - t0) / 1e9, (first.longValue("nanos") - t0) / 1e9,
                        answers * 1e9 / (to.nanos() - from.nanos()), window.processCpuNanos() / 1e3 / answers,
                        last.coordinator().processCpuNanos() / 1e3 / stored, byGroup,
                        (double) window.voluntary() / answers, (double) window.involuntary() / answers, gc[0],
                        peakRssKb / 1024.0, (to.fleetCpu() - from.fleetCpu()) / 1e3 / answers, fleetCpu / 1e3 / stored,
                        o.db().equals("sqlite") ? Double.NaN
                                : FleetStore.serverCpuBetween(from.serverCpu(), to.serverCpu()) / 1e3 / answers,
                        phases);
            }
        }
    }

    /**
     * The coordinator's CPU in each of {@link #PHASES}, between polls (so each edge is up to one
     * poll late): from the process's start (CPU 0) to the first poll that saw an answer stored, to
     * the steady window's edges, to the first poll that saw every answer, to the last poll. Every
     * poll inside a phase counts, so that a thread ending in it (the store's, at the end) is
     * counted up to the last poll that saw it.
     */
    private static Map<String, ThreadCpu.Window> phases(List<Poll> polls, long t0, long stored, Poll from, Poll to) {
        Poll all = firstReaching(polls, stored);
        int[] edges = {polls.indexOf(firstReaching(polls, 1)), polls.indexOf(from), polls.indexOf(to),
                all == null ? polls.size() - 1 : polls.indexOf(all), polls.size() - 1};
        Map<String, ThreadCpu.Window> phases = new LinkedHashMap<>();
        List<ThreadCpu.Sample> first = new ArrayList<>();
        first.add(new ThreadCpu.Sample(t0, 0, Map.of()));
        first.addAll(samples(polls, 0, edges[0]));
        phases.put(PHASES.get(0), ThreadCpu.between(first));
        for (int i = 1; i < PHASES.size(); i++) {
            phases.put(PHASES.get(i), ThreadCpu.between(samples(polls, edges[i - 1], edges[i])));
        }
        return phases;
    }

    /** The coordinator's samples of polls {@code from} to {@code to}, both included. */
    private static List<ThreadCpu.Sample> samples(List<Poll> polls, int from, int to) {
        List<ThreadCpu.Sample> samples = new ArrayList<>(to - from + 1);
        for (Poll p : polls.subList(from, to + 1)) {
            samples.add(p.coordinator());
        }
        return samples;
    }

    private static Poll firstReaching(List<Poll> polls, long stored) {
        for (Poll p : polls) {
            if (p.stored() >= stored) {
                return p;
            }
        }
        return null;
    }

    /** The process's peak resident set (VmHWM) so far, in KiB; 0 when unreadable. */
    private static long vmHwmKb(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    private static void print(Report report, Options o, Map<String, List<Run>> results) {
        boolean pg = !o.db().equals("sqlite");
        report.line("");
        report.line(String.format(Locale.ROOT, "### fleet (%d round(s), builds alternating; the real coordinator"
                        + " command, %s, %,d vignettes, --token; a fake fleet of %,d connections x capacity %d in one"
                        + " JVM; steady state = %.0f %% to %.0f %% of the answers stored; CPU in us per stored answer;"
                        + " median (min-max))", o.runs(), pg ? "PostgreSQL" : "SQLite", o.vignettes(), o.connections(),
                o.capacity(), FROM * 100, TO * 100));
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<String, List<Run>> e : results.entrySet()) {
            List<Run> runs = e.getValue();
            List<String> row = new ArrayList<>(List.of(e.getKey(),
                    stats(runs, Run::steadyRate).formatRate(),
                    stats(runs, Run::steadyUs).format(1),
                    stats(runs, Run::wholeUs).format(1),
                    stats(runs, Run::wholeSeconds).format(1),
                    stats(runs, Run::voluntary).format(2) + " / " + stats(runs, Run::involuntary).format(2),
                    stats(runs, Run::firstDispatchSeconds).format(2),
                    stats(runs, Run::peakHeapMb).format(0) + " / " + stats(runs, Run::peakRssMb).format(0),
                    stats(runs, Run::fleetSteadyUs).format(1)));
            if (pg) {
                row.add(stats(runs, Run::serverSteadyUs).format(1));
            }
            rows.add(row);
        }
        List<String> header = new ArrayList<>(List.of("build, job size, fleet latency", "answers/s (steady)",
                "coordinator us/answer (steady)", "coordinator us/answer (whole run)", "run (s)",
                "voluntary / involuntary context switches per answer (steady)", "first dispatch (s)",
                "peak heap / RSS (MB)", "fleet us/answer (steady)"));
        if (pg) {
            header.add("PostgreSQL server us/answer (steady)");
        }
        report.table(header, rows);
        report.line("");
        report.line("The coordinator's steady-state CPU by thread (us per stored answer, median):");
        report.line("");
        List<String> threadHeader = new ArrayList<>(List.of("build, job size, fleet latency"));
        threadHeader.addAll(ThreadCpu.GROUPS);
        List<List<String>> threadRows = new ArrayList<>();
        for (Map.Entry<String, List<Run>> e : results.entrySet()) {
            List<String> row = new ArrayList<>(List.of(e.getKey()));
            for (String g : ThreadCpu.GROUPS) {
                row.add(stats(e.getValue(), r -> r.steadyUsByGroup().get(g)).format(1));
            }
            threadRows.add(row);
        }
        report.table(threadHeader, threadRows);
        report.line("");
        report.line("The coordinator's CPU by phase of the run (s of CPU, median; each edge is the first poll that saw"
                + " it, so up to one poll late; a thread that ended counts up to the last poll that saw it, and \"other\""
                + " holds what no poll saw, such as JIT compilers retired between polls and the JVM's start):");
        report.line("");
        List<String> phaseHeader = new ArrayList<>(List.of("build, job size, fleet latency", "phase", "wall (s)",
                "CPU (s)"));
        phaseHeader.addAll(ThreadCpu.GROUPS);
        List<List<String>> phaseRows = new ArrayList<>();
        for (Map.Entry<String, List<Run>> e : results.entrySet()) {
            for (String phase : PHASES) {
                List<String> row = new ArrayList<>(List.of(e.getKey(), phase,
                        stats(e.getValue(), r -> r.phases().get(phase).wallNanos() / 1e9).format(2),
                        stats(e.getValue(), r -> r.phases().get(phase).processCpuNanos() / 1e9).format(2)));
                for (String g : ThreadCpu.GROUPS) {
                    row.add(stats(e.getValue(), r -> r.phases().get(phase).cpuByGroup().get(g) / 1e9).format(2));
                }
                phaseRows.add(row);
            }
        }
        report.table(phaseHeader, phaseRows);
        report.line("");
        report.line("Whole run: the coordinator process's CPU from its start to its last poll before exit (polled every"
                + " 10 ms once every answer is stored), over the answers stored; it includes start-up, planning and"
                + " the summary. Peak heap: the largest heap in use before a GC (-Xlog:gc); RSS: VmHWM.");
    }

    private static Stats stats(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        return Stats.of(runs.stream().mapToDouble(f).toArray());
    }
}
