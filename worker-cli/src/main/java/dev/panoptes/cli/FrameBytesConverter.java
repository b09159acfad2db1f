package dev.panoptes.cli;

import dev.panoptes.worker.WorkerOptions;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts {@code --max-frame-bytes}, on the worker and on the coordinator alike: a whole number
 * of bytes, at least {@link WorkerOptions#MIN_FRAME_BYTES} (a frame must hold a registration).
 */
public final class FrameBytesConverter implements ITypeConverter<Integer> {
    /**
     * @throws TypeConversionException when the value is not a whole number, or below the minimum
     */
    @Override
    public Integer convert(String value) {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("must be a whole number of bytes, such as 33554432 (32 MiB), got '"
                    + value + "'");
        }
        if (n < WorkerOptions.MIN_FRAME_BYTES) {
            throw new TypeConversionException("must be at least " + WorkerOptions.MIN_FRAME_BYTES + " (64 KiB), got "
                    + n);
        }
        return n;
    }
}
