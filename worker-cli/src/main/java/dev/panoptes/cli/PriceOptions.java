package dev.panoptes.cli;

import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code --price} and {@code --prices}: what a model's tokens cost, for every command that shows a
 * cost (the run commands through {@link CostOptions}, {@code report} and {@code results}), so all
 * read prices alike. Filled in by picocli; read on the command's thread by {@link #prices}.
 */
final class PriceOptions {
    @Option(names = "--price", order = 150, paramLabel = "MODEL=IN/OUT", converter = PriceConverter.class,
            description = "A model's price in USD per million input (prompt) and output (completion) tokens, such"
                    + " as gpt-4o-mini=0.15/0.60; repeat it per model. The cost per model and in all is then"
                    + " shown (answers the response cache served cost nothing). Wins over --prices.")
    List<Map.Entry<String, Price>> price = new ArrayList<>();

    @Option(names = "--prices", order = 151, paramLabel = "FILE",
            description = "Prices from a JSON file: {\"MODEL\": {\"input\": USD, \"output\": USD}, ...}, USD per"
                    + " million tokens.")
    Path pricesFile;

    /**
     * The prices given: the file's, then each {@code --price} over them; {@link Prices#NONE} when
     * neither option is. A prices file that cannot be read or parsed is a usage error (exit 2)
     * naming it.
     */
    Prices prices(CommandSpec spec) {
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
        return prices;
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
}
