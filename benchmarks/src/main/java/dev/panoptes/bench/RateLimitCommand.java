package dev.panoptes.bench;

import dev.panoptes.bench.fleet.RateLimitBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ratelimit}: the fleet against a model API that throttles, governed and not ({@link RateLimitBench}). */
@Command(name = "ratelimit", mixinStandardHelpOptions = true,
        description = "The fleet against a model API that answers 429 beyond a threshold in flight: the real"
                + " coordinator and workers, with the coordinator's rate governor and without, side by side.")
final class RateLimitCommand extends BenchCommand {
    @Option(names = "--vignettes", description = "Vignettes per run (default: ${DEFAULT-VALUE}).",
            defaultValue = "6000")
    int vignettes;

    @Mixin
    FleetOptions fleet;

    @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
            defaultValue = "16")
    int capacity;

    @Option(names = "--threshold", description = "Requests in flight beyond which the stub answers 429"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "24")
    int threshold;

    @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}).", defaultValue = "1")
    int jobSize;

    @Mixin
    WorkerJarOption product;

    RateLimitCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return RateLimitBench.run(ctx, report, new RateLimitBench.Options(runs(), vignettes, fleet.workers, capacity,
                fleet.latencyMs, threshold, jobSize, product.workerJar));
    }
}
