package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import dev.panoptes.worker.WorkerSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WorkerMain#run} builds only the part of the command tree the arguments need: what it
 * prints, what it starts and what it returns must be what the whole tree's {@code execute()}
 * gives, byte for byte, for help, versions, typos, bad options and valid worker command lines.
 */
class WorkerMainLeanTreeTest {
    private static final Map<String, String> ENV = Map.of(WorkerMain.API_KEY_ENV, "sk-env");
    private static final String[] WORKER = {
        "--coordinator", "10.0.0.5:7070", "--model-api", "http://localhost:8000/v1", "--model", "llama-3.1-8b"
    };

    @AfterEach
    void restoreLogLevel() {
        Logging.setVerbose(false);
    }

    /** Command lines that end before anything runs: help, version, or an error (or the recording starter). */
    static Stream<List<String>> commandLines() {
        List<List<String>> lines = new ArrayList<>(List.of(
                // the root: help lists the subcommands, typos get suggestions
                List.of(), List.of("--help"), List.of("-h"), List.of("--version"), List.of("-V"),
                List.of("--bogus"), List.of("--coordinatr", "h:1"), List.of("coordinatr"), List.of("rusn", "--help"),
                List.of("help"), List.of("help", "coordinator"), List.of("--capacity", "0"), List.of("--heartbeat"),
                List.of("--coordinator", "h:1", "--help"), List.of("--version", "--help"), List.of("-v", "coordinator"),
                List.of("-v", "coordinator", "--help"), List.of("--", "coordinator"), List.of("--coordinator", "nope"),
                List.of("--coordinator", "h:1"), List.of("--model-api", "http://x/v1", "--no-model-check"),
                // the root runs the worker: options whose values name subcommands stay values
                List.of(WORKER), with(WORKER, "-v"), with(WORKER, "--model", "coordinator"),
                with(WORKER, "--heartbeat", "1s", "--heartbeat-timeout", "1s"), with(WORKER, "runs", "--help"),
                with(WORKER, "--tls-cert", "c.pem"),
                // subcommands nested in subcommands
                List.of("runs", "show", "--help"), List.of("runs", "delete", "--help"), List.of("runs", "shw"),
                List.of("runs", "show", "--bogus"), List.of("runs", "--db"),
                // a subcommand's value or positional that names a sibling
                List.of("results", "coordinator"), List.of("eval", "--model", "report", "--bogus"),
                List.of("coordinator", "--suite"), List.of("coordinator", "--help", "extra"),
                List.of("results", "--format", "nope"), List.of("coordinator", "--version")));
        for (String name : Subcommands.NAMES) {
            lines.add(List.of(name, "--help"));
            lines.add(List.of(name, "-h"));
            lines.add(List.of(name, "--bogus"));
            lines.add(List.of(name, "--verbos"));
            lines.add(List.of(name, "-v", "--log-level"));
        }
        return lines.stream();
    }

    @ParameterizedTest
    @MethodSource("commandLines")
    void printsAndReturnsWhatTheWholeTreeDoes(List<String> args) {
        Outcome whole = Outcome.wholeTree(args);
        Logging.setVerbose(false);
        Outcome lean = Outcome.lean(args);

        assertThat(lean).isEqualTo(whole);
    }

    @Test
    void everySubcommandIsCalledAsListed() {
        assertThat(new HashSet<>(Subcommands.NAMES)).hasSameSizeAs(Subcommands.NAMES);
        for (String name : Subcommands.NAMES) {
            Object command = Subcommands.create(name, Map.of());
            CommandLine cmd = command instanceof CommandLine c ? c : new CommandLine(command);
            assertThat(cmd.getCommandName()).isEqualTo(name);
            assertThat(cmd.getCommandSpec().aliases()).isEmpty();
        }
    }

    @Test
    void aSubcommandIsBuiltAloneWithItsOwnSubcommands() {
        CommandLine cmd = WorkerMain.newCommandLine(Map.of(), settings -> 0, List.of("runs"));

        assertThat(cmd.getSubcommands()).containsOnlyKeys("runs");
        assertThat(cmd.getSubcommands().get("runs").getSubcommands()).containsOnlyKeys("show", "delete");
    }

    private static List<String> with(String[] base, String... more) {
        List<String> args = new ArrayList<>(List.of(base));
        args.addAll(List.of(more));
        return args;
    }

    /** What one command line printed, returned, and handed to the starter. */
    private record Outcome(int exit, String out, String err, List<String> started) {
        static Outcome wholeTree(List<String> args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            List<String> started = new ArrayList<>();
            CommandLine cmd = WorkerMain.newCommandLine(ENV, recorder(started));
            cmd.setOut(new PrintWriter(out, true));
            cmd.setErr(new PrintWriter(err, true));
            int exit = cmd.execute(args.toArray(String[]::new));
            return new Outcome(exit, out.toString(), err.toString(), started);
        }

        static Outcome lean(List<String> args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            List<String> started = new ArrayList<>();
            int exit = WorkerMain.run(args.toArray(String[]::new), new PrintWriter(out, true),
                    new PrintWriter(err, true), ENV, recorder(started));
            return new Outcome(exit, out.toString(), err.toString(), started);
        }

        private static WorkerMain.WorkerStarter recorder(List<String> started) {
            return (WorkerSettings settings) -> {
                started.add(settings.toString() + " key=" + settings.apiKey());
                return 7;
            };
        }
    }
}
