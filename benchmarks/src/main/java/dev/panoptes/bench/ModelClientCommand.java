package dev.panoptes.bench;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.model.ModelClientBench;
import dev.panoptes.bench.model.ModelClientKinds;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.List;

/** {@code model-client}: CPU per model call of each HTTP client in the worker's JVM ({@link ModelClientBench}). */
@Command(name = "model-client", mixinStandardHelpOptions = true,
        description = "CPU per model call in the worker's JVM, per HTTP client (java.net.http as used before,"
                + " java.net.http tuned, Apache HttpClient 5, Jetty 12, the product), at N calls in flight"
                + " against a fast local OpenAI-compatible server; threads started.")
final class ModelClientCommand extends BenchCommand {
    @Option(names = "--clients", split = ",", description = "Clients to measure, some of jdk-today, jdk-tuned, apache,"
            + " apache-minimal, apache-classic, jetty, product (default: ${DEFAULT-VALUE}).",
            defaultValue = "jdk-today,jdk-tuned,apache,jetty,product")
    List<String> clients;

    @Option(names = "--n", split = ",", description = "Calls in flight against the 0 ms server"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "8,64,256")
    List<Integer> ns;

    @Option(names = "--slow-n", description = "Calls in flight against the delayed server, 0 for none"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "64")
    int slowN;

    @Option(names = "--slow-ms", description = "The delayed server's delay (default: ${DEFAULT-VALUE}).",
            defaultValue = "20")
    long slowMs;

    @Option(names = "--jit-warmup-calls", description = "Calls at N=64 before anything is measured, per client"
            + " JVM (default: ${DEFAULT-VALUE}).", defaultValue = "10000")
    int jitWarmupCalls;

    @Option(names = "--warmup-calls", description = "Unmeasured calls before each measured batch, enough for"
            + " the JIT to settle on the batch's pace (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
    int warmupCalls;

    @Option(names = "--calls", description = "Measured calls per batch (default: ${DEFAULT-VALUE}).",
            defaultValue = "10000")
    int calls;

    @Option(names = "--max-connections", description = "Each client's connection limit (default:"
            + " ${DEFAULT-VALUE}, the product's default).", defaultValue = "256")
    int maxConnections;

    ModelClientCommand() {
        super(3);
    }

    @Override
    void validate() {
        for (String c : clients) {
            if (!ModelClientKinds.NAMES.contains(c)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "unknown client '" + c
                        + "'; use some of " + ModelClientKinds.NAMES);
            }
        }
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return ModelClientBench.run(ctx, report, new ModelClientBench.Options(clients, ns, slowN, slowMs, runs(),
                jitWarmupCalls, warmupCalls, calls, maxConnections));
    }
}
