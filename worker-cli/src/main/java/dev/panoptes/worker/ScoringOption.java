package dev.panoptes.worker;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** The {@code --scoring N} option of the commands that read runs: which scoring to show. */
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
}
