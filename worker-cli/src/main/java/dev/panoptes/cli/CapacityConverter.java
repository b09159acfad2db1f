package dev.panoptes.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts a worker capacity: a whole number from 1 to {@value #MAX}, the protocol's default
 * coordinator maximum (a worker asking for more would get no more, and would idle threads).
 */
public final class CapacityConverter implements ITypeConverter<Integer> {
    /** The largest capacity accepted. */
    public static final int MAX = 1024;

    /**
     * @throws TypeConversionException when the value is not a whole number in range
     */
    @Override
    public Integer convert(String value) {
        return inRange(value, MAX);
    }

    /**
     * A whole number from 1 to {@code max}, as the worker's counts take it.
     *
     * @throws TypeConversionException when it is not, saying why
     */
    static int inRange(String value, int max) {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("must be a whole number, got '" + value + "'");
        }
        if (n < 1) {
            throw new TypeConversionException("must be at least 1, got " + n);
        }
        if (n > max) {
            throw new TypeConversionException("must be at most " + max + ", got " + n);
        }
        return n;
    }
}
