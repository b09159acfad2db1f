package dev.panoptes.bench;

import dev.panoptes.bench.harness.JfrSummary;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code jfr}: a summary of any JFR recording ({@link JfrSummary}). Not a measurement: it starts no
 * child and takes none of {@link BenchCommand}'s options.
 */
@Command(name = "jfr", mixinStandardHelpOptions = true,
        description = "Summarises a JFR recording (any JVM's): samples per thread, hottest methods by self and"
                + " inclusive samples. For profiling a run by hand, e.g. suite --jvm-opt=-XX:StartFlightRecording=...")
final class JfrCommand implements Callable<Integer> {
    @Parameters(paramLabel = "FILE", description = "The .jfr recording.")
    Path file;

    @Option(names = "--top", description = "Rows per table (default: ${DEFAULT-VALUE}).", defaultValue = "30")
    int top;

    @Option(names = "--first-seconds", description = "Only the first S seconds of the recording.")
    Double firstSeconds;

    @Override
    public Integer call() throws Exception {
        Report report = new Report(System.out, null);
        JfrSummary.print(report, file, file.getFileName().toString(), top,
                firstSeconds == null ? Double.MAX_VALUE : firstSeconds);
        return 0;
    }
}
