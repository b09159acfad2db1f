package dev.panoptes.bench;

import dev.panoptes.bench.fleet.ChoiceBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code choice}: issue 30's speed row, a multiple-choice task beside a generation suite ({@link ChoiceBench}). */
@Command(name = "choice", mixinStandardHelpOptions = true,
        description = "A 4-choice lm-eval task scored by log-likelihood through the real coordinator --task and 2 real"
                + " workers against the stub model, beside a generation suite of the same size: model requests per"
                + " question (counted at the stub), answers/s, coordinator CPU per question.")
final class ChoiceCommand extends BenchCommand {
    @Option(names = "--questions", description = "Questions per run (default: ${DEFAULT-VALUE}).",
            defaultValue = "10000")
    int questions;

    @Option(names = "--workers", description = "Worker processes (default: ${DEFAULT-VALUE}).", defaultValue = "2")
    int workers;

    @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
            defaultValue = "8")
    int capacity;

    @Option(names = "--latency-ms", description = "The stub model's latency per call (default: ${DEFAULT-VALUE}).",
            defaultValue = "50")
    long latencyMs;

    @Option(names = "--job-size", description = "Questions per job (default: ${DEFAULT-VALUE}, the coordinator's"
            + " default).", defaultValue = "8")
    int jobSize;

    @Mixin
    WorkerJarOption product;

    ChoiceCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return ChoiceBench.run(ctx, report, new ChoiceBench.Options(runs(), questions, workers, capacity, latencyMs,
                jobSize, product.workerJar));
    }
}
