package dev.panoptes.bench;

import dev.panoptes.bench.cluster.FailureBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code failure}: measurement 3, how fast a killed or stopped worker is noticed ({@link FailureBench}). */
@Command(name = "failure", mixinStandardHelpOptions = true,
        description = "3. Failure detection: kill -9 of a worker holding jobs (time to fail and redispatch them),"
                + " and SIGSTOP (time to reap it).")
final class FailureCommand extends BenchCommand {
    @Option(names = "--stop-runs", description = "SIGSTOP repetitions (default: ${DEFAULT-VALUE}).",
            defaultValue = "5")
    int stopRuns;

    @Mixin
    HeartbeatOptions heartbeat;

    @Option(names = "--capacity", description = "Jobs the victim holds (default: ${DEFAULT-VALUE}).",
            defaultValue = "8")
    int capacity;

    FailureCommand() {
        super(5);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return FailureBench.run(ctx, report, new FailureBench.Options(runs(), stopRuns, heartbeat.heartbeatMs,
                heartbeat.heartbeatTimeoutMs, capacity));
    }
}
