package dev.panoptes.coordinator;

import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One coordinator per database, with the built {@code worker.jar} as real processes: a second
 * coordinator on the same {@code --db} is refused naming the first, and a {@code kill -9} of the
 * first leaves no lock behind. Runs in surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(60)
class DatabaseLockIT {

    @TempDir
    Path dir;

    private final JarProcesses jars;

    DatabaseLockIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                PATIENCE);
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aSecondCoordinatorIsRefusedNamingTheFirstAndKillingTheFirstFreesTheDatabase() throws Exception {
        Path suite = Files.writeString(dir.resolve("math.jsonl"),
                "{\"id\":\"q1\",\"prompt\":\"1+1?\",\"expected\":\"2\"}\n");
        Path db = dir.resolve("math.db");

        Process first = startCoordinator(suite, db);
        String firstAddress = awaitListening(first);

        Process second = startCoordinator(suite, db);
        assertExitCode(second, 1);
        String refusal = "worker.jar coordinator: " + db + " is in use by another coordinator (pid " + first.pid()
                + " on " + InetAddress.getLocalHost().getHostName() + ", listening on " + firstAddress + ", since ";
        assertThat(log(second).lines()).singleElement().asString()
                .matches(Pattern.quote(refusal) + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"
                        + Pattern.quote("); stop it, or use another --db"));
        assertThat(first.isAlive()).as("the first coordinator is untouched").isTrue();

        first.destroyForcibly(); // kill -9: no shutdown hook, no cleanup, only the OS lets go
        assertThat(first.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

        Process third = startCoordinator(suite, db);
        awaitListening(third);
        assertThat(log(third)).doesNotContain("in use");

        third.destroy(); // SIGTERM, as Ctrl-C: the run stops cleanly and empties its lock file
        assertThat(third.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(log(third)).contains("run the same command again to resume");
        assertThat(dir.resolve("math.db.lock")).isEmptyFile();
    }

    private Process startCoordinator(Path suite, Path db) throws IOException {
        return jars.start("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(), "--listen",
                "127.0.0.1:0", "--wait-for-workers", "5m");
    }

    private String awaitListening(Process p) throws IOException {
        return jars.awaitListening(p);
    }

    private String log(Process p) throws IOException {
        return jars.log(p);
    }

    private void assertExitCode(Process p, int expected) throws Exception {
        jars.assertExitCode(p, expected);
    }
}
