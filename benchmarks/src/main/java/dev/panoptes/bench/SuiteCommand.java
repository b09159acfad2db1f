package dev.panoptes.bench;

import dev.panoptes.bench.fleet.SuiteBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;

/** {@code suite}: measurement 6, the real coordinator command on a suite of a million vignettes ({@link SuiteBench}). */
@Command(name = "suite", mixinStandardHelpOptions = true,
        description = "6. Suite size: the real coordinator command on a generated suite of a million vignettes:"
                + " time to first dispatch, and peak heap under -Xmx = 3 x the file.")
final class SuiteCommand extends BenchCommand {
    @Option(names = "--vignettes", description = "Vignettes in the suite (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000000")
    int vignettes;

    @Option(names = "--prompt-chars", split = ",", description = "Prompt lengths to generate, one suite each"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "150")
    List<Integer> promptChars;

    @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}, the coordinator's"
            + " default).", defaultValue = "8")
    int jobSize;

    @Option(names = "--heap-factor", description = "The coordinator's -Xmx as a multiple of the file size"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "3")
    double heapFactor;

    @Option(names = "--max-run-seconds", description = "Stop a run that has not finished by then"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "180")
    long maxRunSeconds;

    @Mixin
    WorkerJarOption product;

    @Option(names = "--worker-capacity", description = "Capacity of the fast fake worker that serves the run"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "64")
    int workerCapacity;

    SuiteCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return SuiteBench.run(ctx, report, new SuiteBench.Options(runs(), vignettes, promptChars, jobSize, heapFactor,
                maxRunSeconds, product.workerJar, workerCapacity));
    }
}
