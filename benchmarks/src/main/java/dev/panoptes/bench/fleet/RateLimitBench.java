package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.ProductCli;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.SuiteFiles;
import dev.panoptes.bench.model.StubModelNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The fleet against a rate-limited model API: the real coordinator command and real worker
 * processes against the stub model, which answers 429 to any request beyond a threshold in
 * flight (as an API with a concurrency limit, or a gateway, does). Each run is made twice, with
 * the coordinator's rate governor and with {@code --no-rate-governor} (each worker backing off
 * alone, as its HTTP client's retries do), alternating, and reports the share of requests
 * answered 429 and the answers per second against the threshold's ideal (threshold / latency).
 */
public final class RateLimitBench {
    /** How to run it: the options of the {@code ratelimit} command. */
    public record Options(int runs, int vignettes, int workers, int capacity, long latencyMs, int threshold, int jobSize,
                   Path workerJar) {
    }

    private record Run(boolean governed, double rate, long requests, long throttled, double seconds, String summary) {
        double throttledShare() {
            return requests + throttled == 0 ? 0 : (double) throttled / (requests + throttled);
        }
    }

    private static final long POLL_MS = 100;

    private RateLimitBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        ProductCli cli = new ProductCli(o.workerJar());
        double ideal = o.threshold() * 1000.0 / o.latencyMs();
        Path dir = Files.createTempDirectory("panoptes-ratelimit-bench");
        List<Run> runs = new ArrayList<>();
        try {
            Path suite = dir.resolve("suite.jsonl");
            SuiteFiles.writeArithmetic(suite, o.vignettes());
            report.progress(String.format(Locale.ROOT, "%d workers x capacity %d (%d in flight) against a stub model"
                    + " that answers 429 beyond %d in flight, %d ms per call: ideal %.0f answers/s; %,d vignettes per"
                    + " run; binary %s", o.workers(), o.capacity(), o.workers() * o.capacity(), o.threshold(),
                    o.latencyMs(), ideal, o.vignettes(), cli.describe()));
            for (int r = 1; r <= o.runs(); r++) {
                for (boolean governed : new boolean[] {true, false}) {
                    Run run = once(ctx, cli, o, suite, dir.resolve((governed ? "gov" : "free") + r), governed);
                    runs.add(run);
                    report.progress(String.format(Locale.ROOT, "run %d %s: %.1f answers/s (%.0f%% of ideal), %d of %d"
                            + " requests answered 429 (%.1f%%), %.1f s [load %.2f]", r, governed ? "governed" : "ungoverned",
                            run.rate(), 100 * run.rate() / ideal, run.throttled(), run.requests() + run.throttled(),
                            100 * run.throttledShare(), run.seconds(), Machine.loadAverage()));
                }
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        report.line("");
        report.line("### ratelimit (" + o.runs() + " runs of each, alternating; steady-state answers/s, 10 % to 90 %"
                + " of the records with every worker registered; " + o.workers() + " worker processes x"
                + " capacity " + o.capacity() + ", stub model " + o.latencyMs() + " ms per call answering 429 beyond "
                + o.threshold() + " in flight; " + o.vignettes() + " vignettes per run; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ". Binary: `" + cli.describe() + "`.");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        for (boolean governed : new boolean[] {true, false}) {
            List<Run> of = runs.stream().filter(r -> r.governed() == governed).toList();
            Stats rate = Stats.of(of.stream().map(Run::rate).toList());
            Stats share = Stats.of(of.stream().map(r -> 100 * r.throttledShare()).toList());
            rows.add(List.of(governed ? "rate governor (default)" : "--no-rate-governor", rate.format(1),
                    String.format(Locale.ROOT, "%.0f %%", 100 * rate.median() / ideal), share.format(1) + " %"));
        }
        report.table(List.of("coordinator", "answers/s", "of the ideal " + String.format(Locale.ROOT, "%.0f/s", ideal),
                "requests answered 429"), rows);
        report.line("");
        report.line("The governed coordinator's summary of its last run:");
        report.line("");
        report.line("```");
        report.line(runs.stream().filter(Run::governed).reduce((a, b) -> b).orElseThrow().summary());
        report.line("```");
        return 0;
    }

    private static Run once(BenchContext ctx, ProductCli cli, Options o, Path suite, Path runDir, boolean governed)
            throws Exception {
        Files.createDirectories(runDir);
        String name = runDir.getFileName().toString();
        try (Child stub = Child.start(ctx, "ratelimit-stub-" + name, StubModelNode.class, List.of(),
                List.of(Long.toString(o.latencyMs()), Integer.toString(4 * o.workers() * o.capacity()),
                        Integer.toString(o.threshold())))) {
            String url = stub.expect("READY", Duration.ofSeconds(30)).get("url");
            int port = ProductCli.freePort();
            List<String> args = new ArrayList<>(List.of("coordinator", "--listen", "127.0.0.1:" + port, "--suite",
                    suite.toString(), "--model", "stub", "--db", runDir.resolve("results.db").toString(),
                    "--job-size", Integer.toString(o.jobSize()), "--max-attempts", "10"));
            if (!governed) {
                args.add("--no-rate-governor");
            }
            List<Child> workers = new ArrayList<>();
            try (Child coordinator = Child.startCommand(ctx, "ratelimit-coordinator-" + name,
                    cli.command(ctx.coordinatorJvmArgs(), args))) {
                ProductCli.awaitListening(port, 60_000, coordinator);
                Path coordinatorLog = ctx.logDir().resolve("ratelimit-coordinator-" + name + ".log");
                Path db = runDir.resolve("results.db");
                long start = System.nanoTime();
                for (int i = 1; i <= o.workers(); i++) {
                    workers.add(Child.startCommand(ctx, "ratelimit-worker-" + name + "-" + i, cli.command(List.of(),
                            List.of("--coordinator", "127.0.0.1:" + port, "--model-api", url, "--model", "stub",
                                    "--capacity", Integer.toString(o.capacity()), "--requests", Integer.toString(o.capacity()),
                                    "--id", "w" + i))));
                }
                // Answers per second in the steady state (10 % to 90 % of the records, every worker
                // registered), as the e2e benchmark measures it: JVM start-up is not the governor's.
                List<long[]> timeline = new ArrayList<>();
                long allRegistered = -1;
                long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
                while (coordinator.isAlive() && System.nanoTime() - deadline < 0) {
                    long now = System.nanoTime();
                    long records = E2eBench.countRecords(db);
                    timeline.add(new long[] {now, records});
                    if (allRegistered < 0 && E2eBench.registrations(coordinatorLog) >= o.workers()) {
                        allRegistered = now;
                    }
                    if (records >= o.vignettes()) {
                        break;
                    }
                    Thread.sleep(POLL_MS);
                }
                int exit = coordinator.waitFor(Duration.ofMinutes(1));
                double seconds = (System.nanoTime() - start) / 1e9;
                stub.send("count");
                Kv count = stub.expect("COUNT", Duration.ofSeconds(10));
                String summary = String.join("\n", coordinator.drainLines());
                if (exit != 0) {
                    throw new IllegalStateException("the " + (governed ? "governed" : "ungoverned") + " run exited "
                            + exit + "; see " + ctx.logDir());
                }
                return new Run(governed, E2eBench.steadyRate(timeline, o.vignettes(), allRegistered),
                        Long.parseLong(count.get("requests")),
                        Long.parseLong(count.get("throttled")), seconds, summary);
            } finally {
                for (Child w : workers) {
                    w.close();
                }
            }
        }
    }
}
