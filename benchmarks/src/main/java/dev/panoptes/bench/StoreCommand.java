package dev.panoptes.bench;

import dev.panoptes.bench.fleet.E2eBench;
import dev.panoptes.bench.fleet.StoreBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

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

    StoreCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        if (outcomes < 1 || records < 1 || batches.stream().anyMatch(b -> b < 1)) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--outcomes, --records and every --batch must be at least 1");
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
}
