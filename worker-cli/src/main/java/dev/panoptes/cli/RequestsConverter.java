package dev.panoptes.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts a worker's budget of model requests in flight ({@code --requests}): a whole number
 * from 1 to {@value #MAX}. The ceiling is a sanity bound, well past what one model server
 * batches (vLLM's default is 256 sequences) and what one HTTP client's connection pool is for.
 */
public final class RequestsConverter implements ITypeConverter<Integer> {
    /** The largest budget accepted. */
    public static final int MAX = 8192;

    /**
     * @throws TypeConversionException when the value is not a whole number in range
     */
    @Override
    public Integer convert(String value) {
        return CapacityConverter.inRange(value, MAX);
    }
}
