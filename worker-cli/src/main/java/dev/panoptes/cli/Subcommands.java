package dev.panoptes.cli;

import java.util.List;
import java.util.Map;

/**
 * The subcommands of {@code worker.jar}, by name, each built only when asked for. Building a
 * subcommand is what costs at start-up: picocli reflects over its class, its mixins and options
 * and loads their types, so that an invocation that runs one subcommand builds that one alone
 * ({@link WorkerMain#run}). The names are written out here rather than read from the classes'
 * {@code @Command} annotations because reading them would load the classes;
 * {@code WorkerMainLeanTreeTest} checks that they match.
 */
final class Subcommands {
    /** Every subcommand's name, in the order the root's help lists them. */
    static final List<String> NAMES = List.of("coordinator", "eval", "results", "status", "report", "export",
            "rescore", "compare", "demo", "stub-model", "runs");

    private Subcommands() {
    }

    /**
     * A new instance of the subcommand {@code name} (a {@link picocli.CommandLine} when it has
     * subcommands of its own), for {@link picocli.CommandLine#addSubcommand(Object)}. A switch
     * rather than a table of constructor references, so that no other subcommand's class is loaded.
     *
     * @param env the environment the commands that read one take their fallbacks from
     * @throws IllegalArgumentException when {@code name} is not in {@link #NAMES}
     */
    static Object create(String name, Map<String, String> env) {
        switch (name) {
            case "coordinator":
                return new CoordinatorCommand(env);
            case "eval":
                return new EvalCommand(env);
            case "results":
                return new ResultsCommand();
            case "status":
                return new StatusCommand(env);
            case "report":
                return new ReportCommand();
            case "export":
                return new ExportCommand();
            case "rescore":
                return new RescoreCommand();
            case "compare":
                return new CompareCommand(env);
            case "demo":
                return new DemoCommand();
            case "stub-model":
                return new StubModelCommand();
            case "runs":
                return RunsCommand.commandLine(Prompt.SYSTEM);
            default:
                throw new IllegalArgumentException("no subcommand " + name);
        }
    }
}
