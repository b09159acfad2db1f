package dev.panoptes.cli;

import dev.panoptes.report.InspectLog;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;

/**
 * {@code --log-format json|eval} of {@code export --format inspect}: the two forms of an Inspect
 * log, named as Inspect's own {@code --log-format} names them. Stateless; any thread.
 */
final class LogFormatConverter implements ITypeConverter<InspectLog.LogFormat> {
    @Override
    public InspectLog.LogFormat convert(String value) {
        for (InspectLog.LogFormat format : InspectLog.LogFormat.values()) {
            if (format.name().toLowerCase(Locale.ROOT).equals(value)) {
                return format;
            }
        }
        throw new TypeConversionException("'" + value + "' is not a log format: json or eval");
    }
}
