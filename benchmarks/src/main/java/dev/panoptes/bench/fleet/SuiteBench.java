package dev.panoptes.bench.fleet;

import dev.panoptes.bench.fake.FastFakeWorker;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Jcmd;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.ProductCli;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.SuiteFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Measurement 6, suite size: the real {@code coordinator} command on a generated suite of a
 * million vignettes, in a JVM whose maximum heap is three times the suite file's size (so that
 * "peak heap within 3x" is tested, not estimated), with GC logging to read the peak heap from.
 * A {@link FastFakeWorker} is already trying to connect when the coordinator starts; it reports when
 * the first {@code assign} reaches it, on the machine's monotonic clock, against the parent's
 * stamp taken just before the coordinator process was started: the time to first dispatch.
 * The fake worker then serves the rest of the run as fast as it can, so the heap is watched
 * over the whole run (bounded by {@code maxRunSeconds}).
 */
public final class SuiteBench {
    /** How to run it: the options of the {@code suite} command. */
    public record Options(int runs, int vignettes, List<Integer> promptChars, int jobSize, double heapFactor,
                   long maxRunSeconds, Path workerJar, int workerCapacity) {
    }

    private record Run(double listeningSeconds, double firstDispatchSeconds, double liveAfterLoadMb,
                       double peakUsedMb, double peakAfterGcMb, int exitCode, boolean completed, boolean outOfMemory,
                       double runSeconds, int gcPauses, double gcPauseSeconds) {
    }

    private static final Pattern PAUSE_MS = Pattern.compile(" (\\d+(?:\\.\\d+)?)ms$");
    private static final Pattern GC_LINE = Pattern.compile("(\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\)");

    private SuiteBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        ProductCli cli = new ProductCli(o.workerJar());
        Path dir = Files.createTempDirectory("panoptes-suite-bench");
        List<List<String>> rows = new ArrayList<>();
        boolean allMet = true;
        try {
            for (int chars : o.promptChars()) {
                Path suite = dir.resolve("suite-" + o.vignettes() + "-" + chars + ".jsonl");
                long t = System.nanoTime();
                SuiteFiles.write(suite, o.vignettes(), chars);
                long size = Files.size(suite);
                long heapMb = (long) Math.ceil(o.heapFactor() * size / (1024.0 * 1024.0));
                report.progress(String.format(Locale.ROOT, "suite %s: %,d vignettes, %,d bytes (%.0f B/line), written"
                        + " in %.1f s; coordinator heap capped at -Xmx%dm", suite.getFileName(), o.vignettes(), size,
                        (double) size / o.vignettes(), (System.nanoTime() - t) / 1e9, heapMb));
                List<Run> runs = new ArrayList<>();
                for (int r = 1; r <= o.runs(); r++) {
                    Run run = once(ctx, cli, o, suite, dir.resolve("run-" + chars + "-" + r), heapMb);
                    runs.add(run);
                    report.progress(String.format(Locale.ROOT, "run %d: listening after %.2f s, first dispatch after"
                                    + " %.2f s; live heap after load %.0f MB; peak heap used %.0f MB, peak after GC"
                                    + " %.0f MB (%.2f x / %.2f x the file); %d GC pauses, %.2f s in total; %s in"
                                    + " %.1f s (exit %d)%s [load %.2f]",
                            r, run.listeningSeconds(), run.firstDispatchSeconds(), run.liveAfterLoadMb(),
                            run.peakUsedMb(),
                            run.peakAfterGcMb(), run.peakUsedMb() * 1e6 / size, run.peakAfterGcMb() * 1e6 / size,
                            run.gcPauses(), run.gcPauseSeconds(), run.completed() ? "completed" : "stopped",
                            run.runSeconds(), run.exitCode(), run.outOfMemory() ? " OUT OF MEMORY" : "",
                            Machine.loadAverage()));
                }
                Stats first = Stats.of(runs.stream().map(Run::firstDispatchSeconds).toList());
                Stats used = Stats.of(runs.stream().map(Run::peakUsedMb).toList());
                Stats live = Stats.of(runs.stream().map(Run::peakAfterGcMb).toList());
                boolean oom = runs.stream().anyMatch(Run::outOfMemory);
                boolean fastEnough = first.median() <= 5.0;
                boolean smallEnough = !oom && runs.stream().allMatch(Run::completed)
                        && live.max() * 1e6 <= o.heapFactor() * size;
                allMet &= fastEnough && smallEnough;
                rows.add(List.of(String.format(Locale.ROOT, "%,d x ~%d-char prompts", o.vignettes(), chars),
                        String.format(Locale.ROOT, "%.1f (%.0f B/line)", size / 1e6, (double) size / o.vignettes()),
                        Long.toString(heapMb),
                        Stats.of(runs.stream().map(Run::listeningSeconds).toList()).format(2), first.format(2),
                        Stats.of(runs.stream().map(Run::gcPauseSeconds).toList()).format(2),
                        Stats.of(runs.stream().map(Run::liveAfterLoadMb).toList()).format(0), used.format(0),
                        live.format(0),
                        String.format(Locale.ROOT, "%.2f", live.median() * 1e6 / size),
                        runs.stream().allMatch(Run::completed) ? "yes" : "no (stopped at the time limit)",
                        oom ? "YES" : "no", fastEnough ? "met" : "not met", smallEnough ? "met" : "not met"));
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        report.line("");
        report.line("### suite (" + o.runs() + " runs per suite; the real coordinator command, `" + cli.describe()
                + "`, job size " + o.jobSize() + ", -Xmx = " + o.heapFactor() + " x the file, -Xlog:gc; median"
                + " (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("suite", "file (MB)", "-Xmx (MiB)", "listening (s)", "first dispatch (s)",
                "GC pauses (s)", "live heap after load, full GC (MB)", "peak heap used (MB)",
                "peak heap after GC (MB)", "after GC / file", "run completed", "OutOfMemoryError", "first dispatch <= 5 s", "heap <= " + o.heapFactor() + " x file"),
                rows);
        report.line("");
        report.line("Targets: first dispatch within 5 s; peak heap within 3 x the suite file (run with -Xmx at 3 x,"
                + " it must not fail; the live heap after load is measured by a full GC at the first dispatch, and the"
                + " peak occupancy after any GC bounds the live heap over the whole run): "
                + (allMet ? "met" : "not met") + ".");
        return 0;
    }

    private static Run once(BenchContext ctx, ProductCli cli, Options o, Path suite, Path runDir, long heapMb)
            throws Exception {
        Files.createDirectories(runDir);
        int port = ProductCli.freePort();
        Path gcLog = runDir.resolve("gc.log");
        String name = runDir.getFileName().toString();
        try (Child probe = Child.start(ctx, "suite-probe-" + name, FastFakeWorker.class, List.of(),
                List.of(Integer.toString(port), "suite-probe", Integer.toString(o.workerCapacity()), "1000",
                        "120000", "stub"))) {
            // The probe is retrying its connect every 2 ms before the coordinator starts.
            probe.expect("CONNECTING", Duration.ofSeconds(30));
            List<String> jvm = new ArrayList<>(List.of("-Xmx" + heapMb + "m", "-Xlog:gc:file=" + gcLog));
            jvm.addAll(ctx.coordinatorJvmArgs());
            List<String> command = cli.command(jvm,
                    List.of("coordinator", "--listen", "127.0.0.1:" + port, "--suite", suite.toString(),
                            "--model", "stub", "--db", runDir.resolve("results.db").toString(), "--job-size",
                            Integer.toString(o.jobSize())));
            long t0 = System.nanoTime();
            try (Child coordinator = Child.startCommand(ctx, "suite-coordinator-" + name, command)) {
                Kv connected = probe.expect("REGISTERING", Duration.ofSeconds(120));
                Kv first = probe.expect("FIRST-ASSIGN", Duration.ofSeconds(120));
                // The live heap once the suite is loaded and planned: a full GC, read from the GC log.
                Jcmd.run(coordinator.pid(), "GC.run");
                double liveAfterLoad = lastFullGcAfterMb(gcLog, Duration.ofSeconds(10));
                int exit = coordinator.waitFor(Duration.ofSeconds(o.maxRunSeconds()));
                long end = System.nanoTime();
                boolean completed = exit == 0;
                if (exit == -1) {
                    // Over the time limit: stop it as Ctrl-C would, then make sure.
                    coordinator.process().destroy();
                    exit = coordinator.waitFor(Duration.ofSeconds(20));
                }
                double[] peaks = gcPeaksMb(gcLog);
                Files.copy(gcLog, ctx.logDir().resolve("gc-" + name + ".log"));
                String log = Files.readString(ctx.logDir().resolve("suite-coordinator-" + name + ".log"),
                        StandardCharsets.UTF_8);
                return new Run((connected.longValue("nanos") - t0) / 1e9, (first.longValue("nanos") - t0) / 1e9,
                        liveAfterLoad, peaks[0], peaks[1], exit, completed, log.contains("OutOfMemoryError"), (end - t0) / 1e9,
                        (int) peaks[2], peaks[3]);
            }
        }
    }

    /**
     * The heap after the last full GC asked for from outside ("Pause Full (Diagnostic Command)",
     * which is what {@code jcmd GC.run} logs, or "(System.gc())"), waiting for it to appear.
     */
    private static double lastFullGcAfterMb(Path gcLog, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            double found = -1;
            for (String line : Files.readAllLines(gcLog, StandardCharsets.UTF_8)) {
                Matcher m = GC_LINE.matcher(line);
                if ((line.contains("Pause Full (Diagnostic Command)") || line.contains("Pause Full (System.gc())"))
                        && m.find()) {
                    found = mb(m.group(3), m.group(4));
                }
            }
            if (found >= 0 || System.nanoTime() - deadline > 0) {
                return found;
            }
            Thread.sleep(50);
        }
    }

    /**
     * From a -Xlog:gc log: the largest heap in use before and after any GC pause, in MB, the number
     * of pauses and their total seconds: {before, after, pauses, seconds}.
     */
    public static double[] gcPeaksMb(Path gcLog) throws IOException {
        double before = 0;
        double after = 0;
        int pauses = 0;
        double pauseMs = 0;
        for (String line : Files.readAllLines(gcLog, StandardCharsets.UTF_8)) {
            if (!line.contains("Pause")) {
                continue;
            }
            Matcher m = GC_LINE.matcher(line);
            if (m.find()) {
                before = Math.max(before, mb(m.group(1), m.group(2)));
                after = Math.max(after, mb(m.group(3), m.group(4)));
            }
            Matcher t = PAUSE_MS.matcher(line);
            if (t.find()) {
                pauses++;
                pauseMs += Double.parseDouble(t.group(1));
            }
        }
        return new double[] {before, after, pauses, pauseMs / 1000};
    }

    private static double mb(String value, String unit) {
        double bytes = Double.parseDouble(value) * switch (unit) {
            case "K" -> 1024.0;
            case "M" -> 1024.0 * 1024;
            default -> 1024.0 * 1024 * 1024;
        };
        return bytes / 1e6;
    }
}
