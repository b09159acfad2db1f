package dev.panoptes.cli;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * One attempt to run {@code worker.jar}'s own command (the worker, or {@code --version}) on a root
 * built without subcommands, which costs a fraction of the whole tree. It gives up, having printed
 * nothing, whenever the whole tree could answer differently: when the arguments do not parse on
 * the bare root (an unknown subcommand or option is answered with suggestions drawn from the
 * subcommands; an option placed before a subcommand's name parses only on the whole tree), and
 * when usage help is asked for (it lists the subcommands). The caller then runs the same
 * arguments on the whole tree. The arguments are parsed once either way on the bare root: its
 * converters are pure, so parsing them again on the whole tree changes nothing.
 *
 * <p>Not thread-safe; one instance per attempt, on the thread that runs the command.
 */
final class BareRootRun {
    private boolean parsed;
    private boolean needsWholeTree;

    /**
     * Executes {@code args} on {@code bareRoot}, a root configured like the whole tree's but
     * without subcommands. Replaces its execution strategy and its parameter exception handler.
     *
     * @return the exit code; meaningless when {@link #needsWholeTree()} is true afterwards
     */
    int execute(CommandLine bareRoot, String[] args) {
        bareRoot.setExecutionStrategy(this::executeUnlessUsageHelp);
        bareRoot.setParameterExceptionHandler(this::onParameterException);
        return bareRoot.execute(args);
    }

    /** True when the attempt gave up without printing anything: run the arguments on the whole tree. */
    boolean needsWholeTree() {
        return needsWholeTree;
    }

    /** Reached only when the arguments parsed: what picocli does by default, except for usage help. */
    private int executeUnlessUsageHelp(ParseResult parsed) {
        this.parsed = true;
        if (parsed.isUsageHelpRequested()) {
            needsWholeTree = true;
            return 0;
        }
        return new CommandLine.RunLast().execute(parsed);
    }

    /**
     * A parse error gives up, since the whole tree's message or suggestions may differ; a
     * {@link ParameterException} the command itself throws (a missing option, say) is reported
     * as the whole tree reports it.
     */
    private int onParameterException(ParameterException e, String[] args) throws Exception {
        if (!parsed) {
            needsWholeTree = true;
            return 0;
        }
        return CliErrors.USAGE.handleParseException(e, args);
    }
}
