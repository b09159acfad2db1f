package dev.panoptes.bench;

import dev.panoptes.bench.fleet.E2eBench;
import dev.panoptes.bench.fleet.StoreBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;

import dev.panoptes.control.schedule.StoreThreadBench;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** {@code store}: the result store's write rate alone, the second half of e2e ({@link StoreBench}). */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = "Records/s written by JdbcResultStore on SQLite, one transaction per outcome of 8 records"
                + " (also part of e2e), or per batch of outcomes with --batch.")
final class StoreCommand extends BenchCommand {
    @Option(names = "--outcomes", description = "Outcomes per run (default: ${DEFAULT-VALUE}).",
            defaultValue = "5000")
    int outcomes;

    @Option(names = "--batch", split = ",", paramLabel = "N[,N...]", description = "Outcomes per store call and"
            + " transaction, one measurement each; 1 is one record call per outcome (default: ${DEFAULT-VALUE}).",
            defaultValue = "1")
    List<Integer> batches;

    @Option(names = "--records", description = "Records (vignettes) per outcome (default: ${DEFAULT-VALUE}).",
            defaultValue = "8")
    int records;

    @Option(names = "--postgres", paramLabel = "JDBC_URL", description = "Write to this PostgreSQL database (user"
            + " and password in the URL) instead of a SQLite file; by-batch table only.")
    String postgres;

    @Option(names = "--writer", description = "Measure the coordinator's store thread instead: the scheduler's"
            + " StoreWriter (group commit, batches) on JdbcResultStore scoring each answer with exact match; prints"
            + " that thread's CPU per answer stored.")
    boolean writer;

    @Option(names = "--job-size", split = ",", paramLabel = "N[,N...]", description = "With --writer: answers"
            + " (vignettes) per job, one measurement each (default: ${DEFAULT-VALUE}).", defaultValue = "1,8")
    List<Integer> jobSizes;

    @Option(names = "--rate", description = "With --writer: answers submitted per second, in the scheduler's small"
            + " bursts; 0 submits as fast as the writer accepts (default: ${DEFAULT-VALUE}).", defaultValue = "20000")
    int rate;

    @Option(names = "--linger-ms", description = "With --writer: how long the oldest answer waits for others to"
            + " share its commit; default the writer's own.")
    Double lingerMs;

    @Option(names = "--cacheable", description = "With --writer: requests at temperature 0 with a model source, so"
            + " that each record keeps its request key as a run with the response cache does (default: no key).")
    boolean cacheable;

    @Option(names = "--in-flight", description = "With --writer: jobs out at once, answered in random order among"
            + " them as a fleet answers (the coordinator's fleet of 1,000 connections x 64 has 64,000 out), so that"
            + " each batch's keys are scattered over that window; 0 stores the jobs in plan order"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "0")
    int inFlight;

    StoreCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        if (outcomes < 1 || records < 1 || batches.stream().anyMatch(b -> b < 1)) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--outcomes, --records and every --batch must be at least 1");
        }
        if (writer) {
            return measureWriter(report);
        }
        if (batches.equals(List.of(1)) && records == 8 && postgres == null) {
            E2eBench.reportStore(report, StoreBench.measure(report, runs(), outcomes, 1000), outcomes);
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        for (int batch : batches) {
            List<StoreBench.Result> r = StoreBench.measure(report, runs(), outcomes, 1000, batch, records, postgres);
            rows.add(List.of(Integer.toString(batch),
                    Stats.of(r.stream().map(StoreBench.Result::recordsPerSecond).toList()).formatRate(),
                    Stats.of(r.stream().map(StoreBench.Result::outcomesPerSecond).toList()).formatRate(),
                    Stats.of(r.stream().map(StoreBench.Result::microsPerOutcome).toList()).format(1)));
        }
        report.line("");
        String where = postgres == null ? "SQLite" : "PostgreSQL";
        String fresh = postgres == null ? "fresh database per run" : "one database, new job ids per run";
        report.line("### JdbcResultStore on " + where + " by batch (" + runs() + " runs of " + outcomes
                + " outcomes x " + records + " records, one transaction per batch, " + fresh
                + ", after a warm-up run; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("outcomes per transaction", "records/s", "outcomes/s", "us per outcome"), rows);
        return 0;
    }

    private double linger() {
        return lingerMs != null ? lingerMs : StoreThreadBench.defaultLingerMillis();
    }

    /** The store thread's CPU per answer: {@link StoreThreadBench}, a warm-up round then the measured ones. */
    private int measureWriter(Report report) throws Exception {
        if (jobSizes.stream().anyMatch(n -> n < 1) || rate < 0 || inFlight < 0) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "every --job-size must be at least 1, and --rate and --in-flight at least 0");
        }
        Path dir = Files.createTempDirectory("panoptes-store-thread");
        String tag = Long.toString(System.nanoTime(), 36);
        List<List<String>> rows = new ArrayList<>();
        try {
            for (int jobSize : jobSizes) {
                List<StoreThreadBench.Result> results = new ArrayList<>();
                for (int r = 0; r <= runs(); r++) {
                    String round = tag + "-s" + jobSize + "-r" + r;
                    try (JdbcResultStore store = (postgres == null
                            ? JdbcResultStore.openSqlite(dir.resolve(round + ".db"))
                            : JdbcResultStore.openPostgres(postgres, null, null)).withScoring(new RunScoring("exact"))) {
                        StoreThreadBench.Result res = StoreThreadBench.round(store, r == 0 ? Math.min(outcomes, 20_000)
                                : outcomes, jobSize, rate, round, (long) (linger() * 1e6), cacheable, inFlight);
                        report.progress(String.format(Locale.ROOT, "store thread, job size %d, %s: %.2f us CPU per"
                                + " answer, %,.0f answers/s, %.1f answers per commit [load %.2f]", jobSize,
                                r == 0 ? "warm-up" : "round " + r, res.storeThreadMicrosPerAnswer(),
                                res.answersPerSecond(), res.answersPerCommit(), Machine.loadAverage()));
                        if (r > 0) {
                            results.add(res);
                        }
                    }
                }
                rows.add(List.of(Integer.toString(jobSize),
                        Stats.of(results.stream().map(StoreThreadBench.Result::storeThreadMicrosPerAnswer).toList())
                                .format(2),
                        Stats.of(results.stream().map(StoreThreadBench.Result::answersPerSecond).toList()).formatRate(),
                        Stats.of(results.stream().map(StoreThreadBench.Result::answersPerCommit).toList()).format(1)));
            }
        } finally {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
        report.line("");
        report.line("### The store thread on " + (postgres == null ? "SQLite" : "PostgreSQL") + " (" + runs()
                + " rounds of " + outcomes + " answers after a warm-up round, submitted at "
                + (rate == 0 ? "the writer's pace" : rate + " answers/s") + ", linger " + linger()
                + " ms, exact-match scoring" + (cacheable ? ", request keys kept" : "")
                + (inFlight > 1 ? ", answered in random order among " + inFlight + " jobs out" : ", in plan order")
                + "; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("job size", "store thread us CPU per answer", "answers/s", "answers per commit"), rows);
        return 0;
    }
}
