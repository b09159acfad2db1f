package dev.panoptes.console;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The few things the binary does to logback itself (configured by {@link BundledLogging}, or by the
 * user's file given with {@code -Dlogback.configurationFile=FILE}, which logback then reads
 * instead). Levels are set in code only when the command line asks for one
 * ({@code --log-level}, {@code -v}), so that a user's file otherwise has the last word. Quietly does
 * nothing when SLF4J is bound to another backend, as when the classes are embedded elsewhere.
 */
public final class Logging {
    private Logging() {
    }

    /**
     * The system property with which a user gives logback a configuration file of their own
     * ({@code java -Dlogback.configurationFile=FILE -jar worker.jar ...}); logback then reads it
     * instead of the bundled configuration ({@link BundledLogging}).
     */
    public static final String CONFIGURATION_FILE_PROPERTY = "logback.configurationFile";

    /**
     * The loggers whose lifecycle lines the console commands tell in their own words; the stub
     * model's by name, so that this package imports nothing of the packages that use it.
     */
    private static final String[] LIBRARY_LOGGERS = {"dev.panoptes.remote", "dev.panoptes.control",
        "dev.panoptes.demo.StubModelServer"};

    /** Sets the root level to DEBUG when {@code verbose}, else INFO. Any thread. */
    public static void setVerbose(boolean verbose) {
        setRootLevel(verbose ? Level.DEBUG : Level.INFO);
    }

    /**
     * Applies the command line's choice of level:
     * <ul>
     *   <li>a level asked for ({@code --log-level}, or {@code -v}): every logger gets it, the root
     *       and each logger a configuration file gave a level of its own;</li>
     *   <li>none, and the user gave a logback file: nothing is changed, the file decides;</li>
     *   <li>none, and no file: the bundled configuration ({@link BundledLogging}, root at INFO) stands, and with
     *       {@code quietLibrary} the library's own lifecycle lines are kept at WARN.</li>
     * </ul>
     * Any thread.
     *
     * @param requested    the level asked for on the command line, or null
     * @param quietLibrary whether the command tells the library's lifecycle events in its own words
     */
    public static void apply(Level requested, boolean quietLibrary) {
        if (requested != null) {
            setEveryLevel(requested);
        } else if (!userConfigurationGiven() && quietLibrary) {
            setLibraryLevel(Level.WARN);
        }
    }

    /** True when a logback configuration file was given with {@code -D}{@value #CONFIGURATION_FILE_PROPERTY}. */
    public static boolean userConfigurationGiven() {
        String file = System.getProperty(CONFIGURATION_FILE_PROPERTY);
        return file != null && !file.isBlank();
    }

    /**
     * Keeps the library's own lifecycle lines (connections, scheduling) at WARN, for commands that
     * report those events to the person at the console in their own words. With {@code -v}
     * everything logs at DEBUG instead. Any thread. Commands call
     * {@link VerboseMixin#applyQuietingLibrary()} instead, which leaves a user's logback file alone.
     */
    public static void quietLibrary(boolean verbose) {
        setLibraryLevel(verbose ? Level.DEBUG : Level.WARN);
    }

    /** Sets the root's level, and that of every logger that has one of its own, to {@code level}. */
    private static void setEveryLevel(Level level) {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            for (ch.qos.logback.classic.Logger logger : context.getLoggerList()) {
                if (logger.getLevel() != null || Logger.ROOT_LOGGER_NAME.equals(logger.getName())) {
                    logger.setLevel(level);
                }
            }
        }
    }

    private static void setRootLevel(Level level) {
        Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(level);
        }
    }

    /** Sets the library's loggers to {@code level}. */
    private static void setLibraryLevel(Level level) {
        for (String name : LIBRARY_LOGGERS) {
            Logger logger = LoggerFactory.getLogger(name);
            if (logger instanceof ch.qos.logback.classic.Logger logback) {
                logback.setLevel(level);
            }
        }
    }

    /** True when the root logger logs at DEBUG or finer. */
    public static boolean isVerbose() {
        return LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME).isDebugEnabled();
    }

    /**
     * Flushes and stops logging, before {@link Runtime#halt(int)} skips everything else. Any
     * thread; nothing is logged afterwards.
     */
    public static void flushAndStop() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            context.stop();
        }
        System.err.flush();
        System.out.flush();
    }
}
