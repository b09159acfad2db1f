package dev.panoptes.bench;

import dev.panoptes.bench.cluster.SchedulingBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.List;

/** {@code scheduling}: measurement 4, makespan over workers of unequal speed ({@link SchedulingBench}). */
@Command(name = "scheduling", mixinStandardHelpOptions = true,
        description = "4. Scheduling: makespan of J jobs over remote workers of unequal speed, against the ideal.")
final class SchedulingCommand extends BenchCommand {
    @Option(names = "--jobs", description = "Jobs per run (default: ${DEFAULT-VALUE}).", defaultValue = "2000")
    int jobs;

    @Option(names = "--service-us", split = ",", description = "Service time per job of each worker, in"
            + " microseconds (default: ${DEFAULT-VALUE}: speeds 1x, 2x, 4x).", defaultValue = "4000,2000,1000")
    List<Long> serviceMicros;

    @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
            defaultValue = "4")
    int capacity;

    @Option(names = "--profile", description = "After the runs, profile a few more with JFR and perf.")
    boolean profile;

    @Option(names = "--raw-timer", description = "Simulate each job with a plain timed wait, without taking off"
            + " the lateness this machine's timers show (they wake 100-200 us late), to see what that costs.")
    boolean rawTimer;

    @Option(names = "--warmup-runs", description = "Uncounted runs first, remote and local (default:"
            + " ${DEFAULT-VALUE}).", defaultValue = "10")
    int warmupRuns;

    SchedulingCommand() {
        super(5);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return SchedulingBench.run(ctx, report, new SchedulingBench.Options(runs(), jobs, serviceMicros, capacity,
                profile, warmupRuns, rawTimer));
    }
}
