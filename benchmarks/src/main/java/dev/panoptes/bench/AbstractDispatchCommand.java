package dev.panoptes.bench;

import dev.panoptes.bench.dispatch.DispatchBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Option;

import java.util.List;

/**
 * The options of the two dispatch measurements and the floor, which run the same rounds
 * ({@link DispatchBench}) and differ only by the worker that answers: each subclass names its
 * {@link DispatchBench.Mode}.
 */
abstract class AbstractDispatchCommand extends BenchCommand {
    @Option(names = "--k", split = ",", description = "Jobs in flight (default: ${DEFAULT-VALUE}).",
            defaultValue = "1,16,64,256")
    List<Integer> ks;

    @Option(names = "--warmup-ms", description = "Warm-up of each run (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000")
    long warmupMs;

    @Option(names = "--measure-ms", description = "Measured window of each run (default: ${DEFAULT-VALUE}).",
            defaultValue = "3000")
    long measureMs;

    @Option(names = "--jit-warmup-ms", description = "The first, discarded, round per system"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
    long jitWarmupMs;

    @Option(names = "--profile", description = "After the runs, profile one round with JFR and print"
            + " where the time goes.")
    boolean profile;

    @Option(names = "--profile-k", description = "K of the profiled round (default: ${DEFAULT-VALUE}).",
            defaultValue = "64")
    int profileK;

    @Option(names = "--profile-ms", description = "Length of the profiled round (default: ${DEFAULT-VALUE}).",
            defaultValue = "10000")
    long profileMs;

    @Option(names = "--selector-threads", description = "The coordinator's selector threads"
            + " (default: ${DEFAULT-VALUE}, the server's default on 2 cores).", defaultValue = "2")
    int selectorThreads;

    @Option(names = "--completion-threads", description = "The coordinator's completion threads"
            + " (default: ${DEFAULT-VALUE}, the server's default).", defaultValue = "2")
    int completionThreads;

    @Option(names = "--direct-completions", description = "Complete dispatch futures on the coordinator's"
            + " selector threads (ServerOptions.directCompletions), as the coordinator command does.")
    boolean directCompletions;

    @Option(names = "--tls", description = "Also measure the worker protocol over TLS, in the same rounds: a"
            + " second coordinator and real WorkerSession worker over TLS (a self-signed EC certificate), next"
            + " to a plaintext pair with the real WorkerSession, so that the two rows differ only by TLS.")
    boolean tls;

    private final DispatchBench.Mode mode;

    AbstractDispatchCommand(DispatchBench.Mode mode) {
        super(5);
        this.mode = mode;
    }

    @Override
    final int measure(BenchContext ctx, Report report) throws Exception {
        return DispatchBench.run(ctx, report, new DispatchBench.Options(mode, ks, runs(), warmupMs, measureMs,
                jitWarmupMs, profile, profileK, profileMs, selectorThreads, completionThreads, directCompletions, tls));
    }
}
