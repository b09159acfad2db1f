package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunDataLoader;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The {@code --scoring N} option of the commands that read runs ({@code results}, {@code report},
 * {@code compare}): which scoring to show, and the one message for a number that is not one.
 * Stateless; any thread.
 */
final class ScoringOption {
    private ScoringOption() {
    }

    /**
     * @return the number, 0 for the latest
     * @throws ParameterException when it is negative
     */
    static int check(CommandSpec spec, int scoring) {
        if (scoring < 0) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--scoring': " + scoring
                    + " is not a scoring number; scorings are numbered from 1 (0 or no option: the latest)");
        }
        return scoring;
    }

    /**
     * One run with the scores of scoring {@code scoring} (0: the latest).
     *
     * @param hint added to the message when the run has no such scoring, such as " (name a run
     *             with --run)"; empty for none
     * @throws ParameterException when the run has no such scoring, naming those it has
     */
    static RunData load(CommandSpec spec, JdbcResultStore store, String runId, int scoring, String hint) {
        try {
            return RunDataLoader.load(store, runId, scoring);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--scoring': "
                    + e.getMessage() + hint);
        }
    }
}
