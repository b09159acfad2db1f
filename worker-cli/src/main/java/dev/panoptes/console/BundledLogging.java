package dev.panoptes.console;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The binary's logging, set up in code when logback starts: one concise line per event on standard
 * error (standard output stays free for command output), at INFO; {@link Logging} changes the
 * level when the command line asks. Logback finds it through {@code META-INF/services} before it
 * looks for an XML file. It was a bundled {@code logback.xml}; reading that took logback's XML
 * configurator about 175 ms of CPU at every start of every command, this a few.
 *
 * <p>When the user gives a file of their own ({@link Logging#CONFIGURATION_FILE_PROPERTY}), or a
 * {@code logback-test.xml} is on the class path (the tests'), it does nothing and lets logback read
 * that file, as before. Called once, by logback, on the thread that first asks SLF4J for a logger.
 */
public final class BundledLogging extends ContextAwareBase implements Configurator {
    /** The line format: time, level, the logger's simple name, the message. */
    static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n";

    /** For logback's service loader. */
    public BundledLogging() {
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        boolean fileGiven = System.getProperty(Logging.CONFIGURATION_FILE_PROPERTY) != null
                || BundledLogging.class.getClassLoader().getResource("logback-test.xml") != null;
        return configure(context, fileGiven);
    }

    /** As {@link #configure(LoggerContext)}, told whether a configuration file was given. */
    ExecutionStatus configure(LoggerContext context, boolean fileGiven) {
        if (fileGiven) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
