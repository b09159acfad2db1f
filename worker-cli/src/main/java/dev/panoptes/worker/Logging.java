package dev.panoptes.worker;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The few things the binary does to logback itself (configured by {@code logback.xml} in this
 * module). Quietly does nothing when SLF4J is bound to another backend, as when the classes are
 * embedded elsewhere.
 */
public final class Logging {
    private Logging() {
    }

    /** Sets the root level to DEBUG when {@code verbose}, else INFO. Any thread. */
    public static void setVerbose(boolean verbose) {
        Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(verbose ? Level.DEBUG : Level.INFO);
        }
    }

    /**
     * Keeps the library's own lifecycle lines (connections, scheduling) at WARN, for commands that
     * report those events to the person at the console in their own words. With {@code -v}
     * everything logs at DEBUG instead. Any thread.
     */
    public static void quietLibrary(boolean verbose) {
        for (String name : new String[] {"dev.panoptes.remote", "dev.panoptes.control", StubModelServer.class.getName()}) {
            Logger logger = LoggerFactory.getLogger(name);
            if (logger instanceof ch.qos.logback.classic.Logger logback) {
                logback.setLevel(verbose ? Level.DEBUG : Level.WARN);
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
