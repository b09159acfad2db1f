package dev.panoptes.cli;

import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.coordinator.RunGates;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code --price}, {@code --prices} and {@code --max-cost}: what a run's tokens cost, and the budget
 * that stops it. Filled in by picocli; read on the command's thread by {@link #applyTo}.
 */
final class CostOptions {
    @Option(names = "--price", order = 150, paramLabel = "MODEL=IN/OUT", converter = PriceConverter.class,
            description = "A model's price in USD per million input (prompt) and output (completion) tokens, such"
                    + " as gpt-4o-mini=0.15/0.60; repeat it per model. The summary then shows the run's cost per"
                    + " model and in all. Wins over --prices.")
    List<Map.Entry<String, Price>> price = new ArrayList<>();

    @Option(names = "--prices", order = 151, paramLabel = "FILE",
            description = "Prices from a JSON file: {\"MODEL\": {\"input\": USD, \"output\": USD}, ...}, USD per"
                    + " million tokens.")
    Path pricesFile;

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
        Prices prices = Prices.NONE;
        if (pricesFile != null) {
            try {
                prices = Prices.read(pricesFile);
            } catch (IOException e) {
                throw CliErrors.invalid(spec, "--prices", "cannot read " + pricesFile + ": " + e.getMessage());
            } catch (IllegalArgumentException e) {
                throw CliErrors.invalid(spec, "--prices", e.getMessage());
            }
        }
        for (Map.Entry<String, Price> e : price) {
            prices = prices.with(e.getKey(), e.getValue());
        }
        RunGates result = gates.withPrices(prices);
        return maxCost == null ? result : result.withMaxCost(maxCost);
    }

    /** {@code MODEL=IN/OUT}, as {@link Prices#parseEntry} reads it. */
    static final class PriceConverter implements ITypeConverter<Map.Entry<String, Price>> {
        @Override
        public Map.Entry<String, Price> convert(String value) {
            try {
                return Prices.parseEntry(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
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
