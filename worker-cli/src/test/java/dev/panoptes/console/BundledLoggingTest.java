package dev.panoptes.console;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binary's own logging setup: INFO, one line per event on standard error in the bundled
 * format; out of the way of a file the user gives; and found by logback's service loader.
 */
class BundledLoggingTest {
    @Test
    void withoutAFileTheRootLogsAtInfoToStandardErrorOneLinePerEvent() {
        LoggerContext context = new LoggerContext();
        BundledLogging setup = new BundledLogging();
        setup.setContext(context);

        assertThat(setup.configure(context, false)).isEqualTo(Configurator.ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        assertThat(root.getLevel()).isEqualTo(Level.INFO);
        Appender<ILoggingEvent> appender = root.getAppender("STDERR");
        assertThat(appender).isInstanceOf(ConsoleAppender.class);
        ConsoleAppender<ILoggingEvent> console = (ConsoleAppender<ILoggingEvent>) appender;
        assertThat(console.getTarget()).isEqualTo("System.err");
        assertThat(console.isStarted()).isTrue();
        assertThat(((PatternLayoutEncoder) console.getEncoder()).getPattern())
                .isEqualTo("%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n");
        context.stop();
    }

    @Test
    void aFileTheUserGivesIsLeftToLogback() {
        LoggerContext context = new LoggerContext();
        BundledLogging setup = new BundledLogging();
        setup.setContext(context);

        assertThat(setup.configure(context, true)).isEqualTo(Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY);
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders().hasNext()).isFalse();
        context.stop();
    }

    @Test
    void logbackFindsItThroughTheServiceLoader() throws Exception {
        try (InputStream in = BundledLogging.class.getClassLoader()
                .getResourceAsStream("META-INF/services/ch.qos.logback.classic.spi.Configurator")) {
            assertThat(in).isNotNull();
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8).trim())
                    .isEqualTo(BundledLogging.class.getName());
        }
    }
}
