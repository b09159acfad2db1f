package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import ch.qos.logback.classic.Level;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;

/**
 * The shared logging options: {@code -v/--verbose} (debug logging, and stack traces with errors)
 * and {@code --log-level LEVEL}. Mix it into every command ({@code @Mixin VerboseMixin verbose;})
 * and call {@link #apply()}, or {@link #applyQuietingLibrary()}, first thing in {@code call()}.
 *
 * <p>Levels are set in code only when asked for: without {@code -v} or {@code --log-level}, a
 * user's own logback file ({@code -Dlogback.configurationFile=FILE}) decides every level.
 */
public final class VerboseMixin {
    @Option(names = {"-v", "--verbose"}, order = 1000,
            description = "Log at debug level (unless --log-level says otherwise), and print stack traces with errors.")
    private boolean verbose;

    @Option(names = "--log-level", order = 1001, paramLabel = "LEVEL", converter = LevelConverter.class,
            description = "Log at this level: TRACE, DEBUG, INFO, WARN or ERROR, for every logger. Default: INFO, or"
                    + " what the file given with -Dlogback.configurationFile=FILE says.")
    private Level logLevel;

    /** True when {@code -v} was given. */
    public boolean isVerbose() {
        return verbose;
    }

    /** The level asked for on the command line ({@code --log-level}, else DEBUG for {@code -v}); null for none. */
    public Level requestedLevel() {
        if (logLevel != null) {
            return logLevel;
        }
        return verbose ? Level.DEBUG : null;
    }

    /** Sets every logger to the requested level, if one was asked for. Call from the command's thread. */
    public void apply() {
        Logging.apply(requestedLevel(), false);
    }

    /**
     * For commands that report the library's lifecycle events (connections, scheduling) to the
     * person at the console in their own words: as {@link #apply()}, and when no level was asked
     * for and no logback file was given, the library's own lines are kept at WARN.
     */
    public void applyQuietingLibrary() {
        Logging.apply(requestedLevel(), true);
    }

    /** Converts a level name, in any case; refuses the names logback would quietly turn into DEBUG. */
    static final class LevelConverter implements ITypeConverter<Level> {
        @Override
        public Level convert(String value) {
            String name = value == null ? "" : value.trim().toUpperCase(Locale.ROOT);
            return switch (name) {
                case "TRACE" -> Level.TRACE;
                case "DEBUG" -> Level.DEBUG;
                case "INFO" -> Level.INFO;
                case "WARN", "WARNING" -> Level.WARN;
                case "ERROR" -> Level.ERROR;
                default -> throw new TypeConversionException("expected TRACE, DEBUG, INFO, WARN or ERROR, got '"
                        + value + "'");
            };
        }
    }
}
