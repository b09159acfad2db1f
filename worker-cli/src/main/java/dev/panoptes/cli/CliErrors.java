package dev.panoptes.cli;

import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;

/**
 * How every Panoptes command reports errors: one clear line, never a stack trace unless
 * {@code -v} was given. Install both on the top-level {@link CommandLine}; subcommands are
 * covered too.
 */
public final class CliErrors {
    private CliErrors() {
    }

    /**
     * A bad command line: the message (which names the option), a suggestion when an unknown
     * option looks like a known one, and where to find help. Exit code 2.
     */
    public static final IParameterExceptionHandler USAGE = CliErrors::onUsageError;

    /** A failure at run time: its message on one line (plus the stack with -v). Exit code 1. */
    public static final IExecutionExceptionHandler RUNTIME = CliErrors::onRuntimeError;

    /**
     * A bad value of {@code option}, reported as picocli reports its own (exit 2, with where to
     * find help): {@code why} says what was wrong and what is accepted.
     */
    static ParameterException invalid(CommandSpec spec, String option, String why) {
        return new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + why);
    }

    private static int onUsageError(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(cmd.getColorScheme().errorText(e.getMessage()));
        UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    private static int onRuntimeError(Exception e, CommandLine cmd, ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        err.println(cmd.getColorScheme().errorText(cmd.getCommandSpec().qualifiedName() + ": " + message));
        if (verbose(parsed)) {
            e.printStackTrace(err);
        }
        err.flush();
        return cmd.getCommandSpec().exitCodeOnExecutionException();
    }

    /** True when -v/--verbose was given to the command or any of its subcommands. */
    static boolean verbose(ParseResult parsed) {
        for (ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }
}
