package dev.panoptes.bench;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The harness every measurement command extends, so that a new benchmark is one class: a
 * {@code @Command} subclass declares its own options and implements {@link #measure}; this class
 * owns the options every measurement takes ({@code --runs}, {@code --out}, {@code --jvm-opt},
 * {@code --coordinator-jvm-opt}, {@code -v}) and the frame around the measurement: it checks
 * them, prints the machine's header, opens the {@link BenchContext} whose children it kills when
 * the measurement ends however it ends, and appends the Markdown to {@code --out} on success.
 *
 * <p>picocli fills the fields and calls {@link #call()} on the main thread; nothing here is shared
 * with other threads.
 */
abstract class BenchCommand implements Callable<Integer> {
    @Option(names = "--runs", description = "Measured runs; figures are their median with the min-max spread"
            + " (default: 5 for dispatch, 3 for most others; see each command).")
    Integer runs;

    @Option(names = "--out", paramLabel = "FILE", description = "Also append the Markdown report to FILE.")
    Path out;

    @Option(names = "--jvm-opt", paramLabel = "OPT", description = "An extra option for every child JVM of the"
            + " harness (repeatable).")
    List<String> jvmOpts = new ArrayList<>();

    @Option(names = "--coordinator-jvm-opt", paramLabel = "OPT", description = "An extra option for the"
            + " product's coordinator process (e2e, suite, fleet, choice, ratelimit; repeatable), e.g."
            + " -XX:StartFlightRecording=filename=c.jfr,settings=profile, or, to profile a whole run by"
            + " phase, -agentpath:libasyncProfiler.so=start,event=cpu,interval=1ms,threads,loop=1s,collapsed,"
            + "file=DIR/p-%%p-%%t.collapsed (one file a second).")
    List<String> coordinatorJvmOpts = new ArrayList<>();

    @Option(names = {"-v", "--verbose"}, description = "Echo the children's replies on stderr.")
    boolean verbose;

    private final int defaultRuns;

    /** @param defaultRuns the measured runs when {@code --runs} is not given */
    BenchCommand(int defaultRuns) {
        this.defaultRuns = defaultRuns;
    }

    /**
     * Runs the measurement and reports its figures.
     *
     * @return the exit code, 0 when measured
     */
    abstract int measure(BenchContext ctx, Report report) throws Exception;

    /**
     * Checks the command's own options before anything starts; throws a
     * {@link CommandLine.ParameterException} for a bad one. Nothing to check by default.
     */
    void validate() {
    }

    /** The runs asked for, or the command's default. */
    final int runs() {
        return runs == null ? defaultRuns : runs;
    }

    @Override
    public final Integer call() throws Exception {
        validate();
        if (runs != null && runs < 1) {
            throw new CommandLine.ParameterException(new CommandLine(new BenchMain()),
                    "--runs must be at least 1, got " + runs);
        }
        String name = getClass().getAnnotation(Command.class).name();
        Report report = new Report(System.out, out);
        Machine.report(System.out);
        try (BenchContext ctx = new BenchContext(name, verbose, jvmOpts, coordinatorJvmOpts)) {
            System.out.println("# " + name + ": child logs in " + ctx.logDir());
            int code = measure(ctx, report);
            report.save();
            return code;
        }
    }
}
