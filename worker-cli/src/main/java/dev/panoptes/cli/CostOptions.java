package dev.panoptes.cli;

import dev.panoptes.coordinator.RunGates;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --price}, {@code --prices} (the {@link PriceOptions} every costing command shares) and
 * {@code --max-cost}: what a run's tokens cost, and the budget that stops it. Filled in by picocli;
 * read on the command's thread by {@link #applyTo}.
 */
final class CostOptions {
    @Mixin
    PriceOptions prices;

    @Option(names = "--max-cost", order = 152, paramLabel = "USD", converter = UsdConverter.class,
            description = "A budget: once the answers stored cost this many USD (at the prices given, which every"
                    + " --model needs), no new job is sent; jobs in flight land and are stored, the summary says"
                    + " the budget stopped the run, and it exits 7. The same command with a larger budget resumes."
                    + " A judge's calls are costed but not stopped. Default: none.")
    Double maxCost;

    /**
     * These options on {@code gates}; a prices file that cannot be read or parsed is a usage error
     * (exit 2) naming it.
     */
    RunGates applyTo(RunGates gates, CommandSpec spec) {
        RunGates result = gates.withPrices(prices.prices(spec));
        return maxCost == null ? result : result.withMaxCost(maxCost);
    }

    /** An amount of USD: a number, 0 or more. */
    static final class UsdConverter implements ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            double usd;
            try {
                usd = Double.parseDouble(value.trim());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("must be an amount of USD such as 2.50, got '" + value + "'");
            }
            if (!(usd >= 0) || Double.isInfinite(usd)) {
                throw new TypeConversionException("must be an amount of USD, 0 or more, got " + value);
            }
            return usd;
        }
    }
}
