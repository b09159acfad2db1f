package dev.panoptes.cli;

import dev.panoptes.worker.WorkerIds;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Checks a worker id against PROTOCOL.md's rule (1 to 128 of {@code [A-Za-z0-9._:@-]}). */
public final class WorkerIdConverter implements ITypeConverter<String> {
    /**
     * @throws TypeConversionException naming the rule and the value when the id is invalid
     */
    @Override
    public String convert(String value) {
        if (!WorkerIds.isValid(value)) {
            throw new TypeConversionException("must be 1 to " + WorkerIds.MAX_LENGTH
                    + " characters from [A-Za-z0-9._:@-], got '" + value + "'");
        }
        return value;
    }
}
