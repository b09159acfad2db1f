package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import dev.panoptes.coordinator.CoordinatorRun;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --log-level} and {@code -v} on the worker and its commands, and a user's own logback
 * file ({@code -Dlogback.configurationFile}), which the binary leaves alone unless a level is
 * asked for on the command line. Commands run in process with execute() and stop at a usage
 * error right after applying the levels.
 */
class LogLevelOptionsTest {
    private static final Logger ROOT = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private static final Logger LIBRARY = (Logger) LoggerFactory.getLogger("dev.panoptes.remote");

    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** Every logger's own level before the test (null for those that inherit), as logback-test.xml set them. */
    private final Map<String, Level> levelsBefore = new HashMap<>();

    @BeforeEach
    void rememberLevels() {
        ROOT.getLoggerContext().getLoggerList().forEach(l -> levelsBefore.put(l.getName(), l.getLevel()));
    }

    @AfterEach
    void restoreLogging() {
        System.clearProperty(Logging.CONFIGURATION_FILE_PROPERTY);
        ROOT.getLoggerContext().getLoggerList().forEach(l -> l.setLevel(levelsBefore.get(l.getName())));
    }

    @Test
    void everyCommandTakesTheLogLevelOptionAndTheVerboseShortcut() {
        CommandLine cmd = WorkerMain.newCommandLine(Map.of(), settings -> 0);
        assertThat(cmd.getCommandSpec().findOption("--log-level")).isNotNull();
        assertThat(cmd.getCommandSpec().findOption("-v")).isNotNull();
        cmd.getSubcommands().forEach((name, sub) -> {
            assertThat(sub.getCommandSpec().findOption("--log-level")).as("%s --log-level", name).isNotNull();
            assertThat(sub.getCommandSpec().findOption("-v")).as("%s -v", name).isNotNull();
        });
    }

    @Test
    void theLogLevelOptionSetsTheRootLevelInAnyCase() {
        assertThat(execute("results", "--db", missingDb(), "--log-level", "warn")).isEqualTo(2);
        assertThat(ROOT.getLevel()).isEqualTo(Level.WARN);

        assertThat(execute("--log-level", "TRACE")).as("the worker, missing its --coordinator").isEqualTo(2);
        assertThat(ROOT.getLevel()).isEqualTo(Level.TRACE);
    }

    @Test
    void verboseMeansDebugAndAnExplicitLevelWinsOverIt() {
        assertThat(execute("rescore", "--db", missingDb(), "--scorer", "exact", "-v")).isEqualTo(2);
        assertThat(ROOT.getLevel()).isEqualTo(Level.DEBUG);

        assertThat(execute("rescore", "--db", missingDb(), "--scorer", "exact", "-v", "--log-level", "ERROR"))
                .isEqualTo(2);
        assertThat(ROOT.getLevel()).isEqualTo(Level.ERROR);
    }

    @Test
    void anUnknownLevelIsAUsageErrorThatListsTheLevels() {
        assertThat(execute("report", "--db", missingDb(), "--log-level", "LOUD")).isEqualTo(2);

        assertThat(err.toString()).contains("--log-level").contains("expected TRACE, DEBUG, INFO, WARN or ERROR")
                .contains("LOUD");
    }

    @Test
    void withoutAUserFileTheCoordinatorKeepsTheLibrarysLinesAtWarn() {
        assertThat(execute("coordinator", "--suite", missingDb(), "--model", "m")).isEqualTo(2);

        assertThat(LIBRARY.getLevel()).isEqualTo(Level.WARN);
        assertThat(ROOT.getLevel()).isEqualTo(Level.INFO);
    }

    @Test
    void anExplicitLevelAppliesToEveryLoggerEvenThoseAFileGaveALevel() {
        Logger configured = (Logger) LoggerFactory.getLogger("dev.panoptes");
        configured.setLevel(Level.DEBUG);
        LIBRARY.setLevel(Level.WARN);

        assertThat(execute("coordinator", "--suite", missingDb(), "--model", "m", "--log-level", "INFO")).isEqualTo(2);

        assertThat(ROOT.getLevel()).isEqualTo(Level.INFO);
        assertThat(configured.getEffectiveLevel()).isEqualTo(Level.INFO);
        assertThat(LIBRARY.getEffectiveLevel()).isEqualTo(Level.INFO);
        assertThat(LoggerFactory.getLogger(CoordinatorRun.class).isDebugEnabled()).isFalse();
    }

    @Test
    void aUsersLogbackFileDecidesTheLevelsWhenNoneIsAskedFor() {
        System.setProperty(Logging.CONFIGURATION_FILE_PROPERTY, dir.resolve("logback.xml").toString());
        // What the user's file said, as logback would have configured it at startup.
        ROOT.setLevel(Level.ERROR);
        LIBRARY.setLevel(Level.TRACE);

        assertThat(execute("coordinator", "--suite", missingDb(), "--model", "m")).isEqualTo(2);
        assertThat(execute("results", "--db", missingDb())).isEqualTo(2);

        assertThat(ROOT.getLevel()).isEqualTo(Level.ERROR);
        assertThat(LIBRARY.getLevel()).isEqualTo(Level.TRACE);
    }

    @Test
    void aLevelAskedForOnTheCommandLineWinsOverTheUsersFile() {
        System.setProperty(Logging.CONFIGURATION_FILE_PROPERTY, dir.resolve("logback.xml").toString());
        ROOT.setLevel(Level.ERROR);

        assertThat(execute("coordinator", "--suite", missingDb(), "--model", "m", "-v")).isEqualTo(2);

        assertThat(ROOT.getLevel()).isEqualTo(Level.DEBUG);
        assertThat(LIBRARY.getEffectiveLevel()).isEqualTo(Level.DEBUG);
    }

    private String missingDb() {
        return dir.resolve("missing.db").toString();
    }

    private int execute(String... args) {
        CommandLine cmd = WorkerMain.newCommandLine(Map.of(), settings -> 0);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        return cmd.execute(args);
    }
}
