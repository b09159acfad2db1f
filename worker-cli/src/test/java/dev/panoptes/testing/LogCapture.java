package dev.panoptes.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what one logger logs, for tests that check what a user would read. */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final Logger logger;
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
        setContext(logger.getLoggerContext());
        start();
        logger.addAppender(this);
    }

    /** Starts recording what {@code source}'s logger logs. */
    public static LogCapture of(Class<?> source) {
        return new LogCapture((Logger) LoggerFactory.getLogger(source));
    }

    /** Starts recording what every logger logs (at the levels they are set to). */
    public static LogCapture everything() {
        return new LogCapture((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME));
    }

    /** Every event so far as a person would read it: the message, and the messages of its causes. */
    public List<String> lines() {
        return events.stream().map(e -> {
            StringBuilder b = new StringBuilder(e.getLoggerName()).append(": ").append(e.getFormattedMessage());
            for (ch.qos.logback.classic.spi.IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
                b.append(" | ").append(t.getClassName()).append(": ").append(t.getMessage());
            }
            return b.toString();
        }).toList();
    }

    @Override
    protected void append(ILoggingEvent event) {
        events.add(event);
    }

    /** The formatted messages logged so far that contain {@code text}. */
    public List<String> messagesContaining(String text) {
        return events.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
    }

    /** The events logged so far that contain {@code text}. */
    public List<ILoggingEvent> eventsContaining(String text) {
        return events.stream().filter(e -> e.getFormattedMessage().contains(text)).toList();
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        stop();
    }
}
