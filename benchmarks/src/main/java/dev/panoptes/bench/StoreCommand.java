package dev.panoptes.bench;

import dev.panoptes.bench.fleet.E2eBench;
import dev.panoptes.bench.fleet.StoreBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.List;

/** {@code store}: the result store's write rate alone, the second half of e2e ({@link StoreBench}). */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = "Records/s written by JdbcResultStore on SQLite, one transaction per outcome of 8 records"
                + " (also part of e2e).")
final class StoreCommand extends BenchCommand {
    @Option(names = "--outcomes", description = "Outcomes per run (default: ${DEFAULT-VALUE}).",
            defaultValue = "5000")
    int outcomes;

    StoreCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        List<StoreBench.Result> r = StoreBench.measure(report, runs(), outcomes, 1000);
        E2eBench.reportStore(report, r, outcomes);
        return 0;
    }
}
