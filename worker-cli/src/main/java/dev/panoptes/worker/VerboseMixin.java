package dev.panoptes.worker;

import picocli.CommandLine.Option;

/**
 * The shared {@code -v/--verbose} option: debug logging, and stack traces with errors. Mix it
 * into every command ({@code @Mixin VerboseMixin verbose;}) and call {@link #apply()} first thing
 * in {@code call()}.
 */
public final class VerboseMixin {
    @Option(names = {"-v", "--verbose"}, order = 1000,
            description = "Log at debug level, and print stack traces with errors.")
    private boolean verbose;

    /** True when {@code -v} was given. */
    public boolean isVerbose() {
        return verbose;
    }

    /** Raises the log level to DEBUG when {@code -v} was given. Call from the command's thread. */
    public void apply() {
        if (verbose) {
            Logging.setVerbose(true);
        }
    }
}
