package dev.panoptes.cli;

import dev.panoptes.coordinator.RunGates;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;

/**
 * {@code --fail-under} and {@code --summary-json}: what a CI job needs of a run besides its jobs
 * completing, a floor on each model's accuracy (its own exit code) and the summary as JSON.
 * Filled in by picocli; read on the command's thread by {@link #applyTo}.
 */
final class GateOptions {
    @Option(names = "--fail-under", order = 155, paramLabel = "SCORE", converter = ScoreConverter.class,
            description = "Exit 6 when any model's accuracy (mean score, 0 to 1) is below SCORE, or it has no"
                    + " scored answer; the summary names each. Checked once every job completed. Default: none.")
    Double failUnder;

    @Option(names = "--summary-json", order = 156, paramLabel = "FILE",
            description = "Also write the summary to FILE as JSON: run id, exit code, counts, per model and group"
                    + " the accuracy with its 95%% interval (its method named), failed answers, tokens, cost, budget.")
    Path summaryJson;

    /** These options on {@code gates}. */
    RunGates applyTo(RunGates gates) {
        RunGates result = gates.withSummaryJson(summaryJson);
        return failUnder == null ? result : result.withFailUnder(failUnder);
    }

    /** A score from 0 to 1. */
    static final class ScoreConverter implements ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            double score;
            try {
                score = Double.parseDouble(value.trim());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("must be an accuracy from 0 to 1 such as 0.85, got '" + value + "'");
            }
            if (!(score >= 0 && score <= 1)) {
                throw new TypeConversionException("must be an accuracy from 0 to 1, got " + value);
            }
            return score;
        }
    }
}
