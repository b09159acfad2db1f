package dev.panoptes.bench;

import dev.panoptes.bench.cluster.ScaleBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;

/** {@code scale}: measurement 2, many registered workers on one coordinator ({@link ScaleBench}). */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "2. Connection scale: N registered, heartbeating workers on one coordinator: heap, threads,"
                + " idle CPU, time to register.")
final class ScaleCommand extends BenchCommand {
    @Option(names = "--n", split = ",", description = "Worker counts (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000,5000,10000")
    List<Integer> ns;

    @Mixin
    HeartbeatOptions heartbeat;

    @Option(names = "--settle-ms", description = "Wait after registration before measuring"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "3000")
    long settleMs;

    @Option(names = "--cpu-window-ms", description = "CPU measurement window (default: ${DEFAULT-VALUE}).",
            defaultValue = "5000")
    long cpuWindowMs;

    @Option(names = "--connect-parallel", description = "Connects in progress at once on the worker side"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "256")
    int connectParallel;

    @Option(names = "--profile", description = "In the last run of the largest N, profile the coordinator with"
            + " JFR while the workers register and with perf while they heartbeat.")
    boolean profile;

    ScaleCommand() {
        super(3);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return ScaleBench.run(ctx, report, new ScaleBench.Options(ns, runs(), heartbeat.heartbeatMs,
                heartbeat.heartbeatTimeoutMs, settleMs, cpuWindowMs, connectParallel, profile));
    }
}
