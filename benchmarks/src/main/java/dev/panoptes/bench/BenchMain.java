package dev.panoptes.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/**
 * {@code java -jar benchmarks/target/benchmarks.jar NAME [options]}: runs one measurement of
 * BENCHMARKS.md and prints its figures as Markdown. Every measurement starts its coordinator and
 * workers as separate JVMs on loopback and stops them when it ends.
 *
 * <p>This is the root command only: it lists the subcommands, one class each, most of them
 * {@link BenchCommand}s. A new benchmark is one such class, added to the list below.
 */
@Command(name = "benchmarks.jar", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Panoptes benchmarks (issue 7). Each command prints its figures as Markdown; see BENCHMARKS.md.",
        subcommands = {
            DispatchCommand.class,
            DispatchSessionCommand.class,
            FloorCommand.class,
            CodecCommand.class,
            StoreCommand.class,
            ScaleCommand.class,
            FailureCommand.class,
            SchedulingCommand.class,
            E2eCommand.class,
            ChoiceCommand.class,
            RateLimitCommand.class,
            ModelClientCommand.class,
            JfrCommand.class,
            SuiteCommand.class,
            FleetCommand.class,
            SandboxCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:measured", "1:the measurement failed (the message says why)", "2:invalid command line"})
public final class BenchMain implements Callable<Integer> {
    BenchMain() {
    }

    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new BenchMain());
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("benchmark failed: " + e.getMessage());
            e.printStackTrace(commandLine.getErr());
            return 1;
        });
        System.exit(cli.execute(args));
    }

    @Override
    public Integer call() {
        new CommandLine(this).usage(System.out);
        return 2;
    }
}
