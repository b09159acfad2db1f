package dev.panoptes.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts a share such as {@code --max-error-rate}: a decimal number from 0 to 1 ({@code 0.05}),
 * or a percentage ({@code 5%}), so that a value that is neither says what is wanted instead of
 * naming a Java type.
 */
public final class ShareConverter implements ITypeConverter<Double> {
    /**
     * @throws TypeConversionException when the value is not a number, or not from 0 to 1 (0 % to 100 %)
     */
    @Override
    public Double convert(String value) {
        String text = value.trim();
        boolean percent = text.endsWith("%");
        double share;
        try {
            share = Double.parseDouble(percent ? text.substring(0, text.length() - 1).trim() : text);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("must be a share from 0 to 1 (such as 0.05) or a percentage (5%), got '"
                    + value + "'");
        }
        if (percent) {
            share /= 100;
        }
        if (!(share >= 0 && share <= 1)) {
            throw new TypeConversionException("must be from 0 to 1 (a share of the answers stored), got " + value);
        }
        return share;
    }
}
