package dev.panoptes.cli;

import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.coordinator.DryRun;
import dev.panoptes.coordinator.RunGates;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.util.List;

/**
 * The options that shape one run beyond its suite, models and store, the same for every command
 * that runs one ({@code coordinator}, {@code eval}): which vignettes it asks and whether it only
 * shows the plan ({@link SubsetOptions}), whether answers the database holds serve again
 * ({@link CacheOptions}) and whether failed answers are asked again ({@code --retry-failed}), what it may cost ({@link CostOptions}), when it counts as failed
 * ({@link GateOptions}) and how it shows its progress ({@link ProgressOption}). One place turns
 * them into a {@link CoordinatorRun}'s settings, so that the commands cannot drift apart. The
 * command's thread only.
 */
final class RunChoices {
    @Mixin
    private SubsetOptions subsetOptions;

    @Mixin
    private CacheOptions cache;

    @Mixin
    private CostOptions cost;

    @Mixin
    private GateOptions gates;

    @Mixin
    private ProgressOption progress;

    @Option(names = "--retry-failed", order = 148,
            description = "On a resume, ask again the vignettes whose stored answer is a failed one (the model API"
                    + " gave none, e.g. HTTP 400); each new answer, good or failed again, replaces the failed one,"
                    + " which the console names with its error. Answers that are not failed are kept, not asked"
                    + " again. Without it a failed answer stays as stored.")
    private boolean retryFailed;

    /** The vignettes asked; a usage error (exit 2) when the options are wrong. */
    SuiteSubset subset(CommandSpec spec) {
        return subsetOptions.subset(spec);
    }

    /** True with --dry-run: the command prints the plan ({@link #printPlan}) and runs nothing. */
    boolean dryRun() {
        return subsetOptions.dryRun;
    }

    /** True when the live progress bar is wanted and possible (see {@link ProgressOption}). */
    boolean liveProgress() {
        return progress.live();
    }

    /** Prints the plan and the first requests of the run, sending nothing; exit 0, or 2 when the suite or --sample-id is wrong. */
    int printPlan(CommandSpec spec, CoordinatorSettings settings, SuiteSubset subset) throws IOException {
        try {
            new DryRun(settings, subset).print(spec.commandLine().getOut(), DryRun.DEFAULT_REQUESTS);
            return 0;
        } catch (SuiteFormatException e) {
            spec.commandLine().getErr().println(e.getMessage());
            spec.commandLine().getErr().flush();
            return spec.exitCodeOnInvalidInput();
        } catch (SuiteSubset.UnknownIdsException e) {
            throw CliErrors.invalid(spec, "--sample-id", e.getMessage());
        }
    }

    /**
     * The run's gates (error rate, accuracy floor, prices, budget, summary JSON); a model without a
     * price under --max-cost is a usage error (exit 2) naming it.
     */
    RunGates gates(CommandSpec spec, RunOptions runOptions, CoordinatorSettings settings) {
        RunGates result = gates.applyTo(cost.applyTo(RunGates.NONE.withMaxErrorRate(runOptions.maxErrorRate), spec));
        List<String> unpriced = result.unpricedUnderBudget(settings.models());
        if (!unpriced.isEmpty()) {
            throw CliErrors.invalid(spec, "--max-cost", "no price for " + String.join(", ", unpriced) + "; give each"
                    + " model of the run --price MODEL=IN/OUT (USD per million input/output tokens) or --prices FILE");
        }
        return result;
    }

    /** Gives {@code run} these choices: its gates, the cache's policy, the subset and --retry-failed. */
    CoordinatorRun applyTo(CoordinatorRun run, CommandSpec spec, RunGates runGates, SuiteSubset subset) {
        return run.withGates(runGates).withCache(cache.policy(spec)).withSubset(subset).withRetryFailed(retryFailed);
    }
}
