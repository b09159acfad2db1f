package dev.panoptes.bench;

import dev.panoptes.bench.fleet.E2eBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code e2e}: measurement 5, the real coordinator and workers against the stub model ({@link E2eBench}). */
@Command(name = "e2e", mixinStandardHelpOptions = true,
        description = "5. End to end: the real coordinator command and 4 real workers (capacity 8) against the stub"
                + " model with a fixed latency; then JdbcResultStore's records/s on SQLite.")
final class E2eCommand extends BenchCommand {
    @Option(names = "--vignettes", description = "Vignettes per run (default: ${DEFAULT-VALUE}, about 20 s at the"
            + " limit).", defaultValue = "12800")
    int vignettes;

    @Mixin
    FleetOptions fleet;

    @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
            defaultValue = "8")
    int capacity;

    @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}, the coordinator's"
            + " default).", defaultValue = "8")
    int jobSize;

    @Mixin
    WorkerJarOption product;

    @Option(names = "--store-outcomes", description = "Outcomes per run of the store measurement"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
    int storeOutcomes;

    @Option(names = "--profile", description = "After the runs, profile one more: JFR on a worker, perf on a"
            + " worker, the coordinator and the stub model.")
    boolean profile;

    @Option(names = "--stub-nagle", description = "Run the stub model with Nagle's algorithm on (the JDK"
            + " HttpServer default, and the stub's before eb744b7), which adds a delayed-ACK wait of about 40 ms to"
            + " each call.")
    boolean stubNagle;

    E2eCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return E2eBench.run(ctx, report, new E2eBench.Options(runs(), vignettes, fleet.workers, capacity,
                fleet.latencyMs, jobSize, product.workerJar, storeOutcomes, !stubNagle, profile));
    }
}
