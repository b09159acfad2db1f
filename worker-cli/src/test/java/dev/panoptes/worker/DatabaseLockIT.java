package dev.panoptes.worker;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.panoptes.worker.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One coordinator per database, with the built {@code worker.jar} as real processes: a second
 * coordinator on the same {@code --db} is refused naming the first, and a {@code kill -9} of the
 * first leaves no lock behind. Runs in Maven's integration-test phase, after {@code package}.
 */
@Timeout(60)
class DatabaseLockIT {
    private static final Path JAR = Path.of(System.getProperty("worker.jar", "target/worker.jar"));
    private static final Path LOGS = Path.of("target", "it-logs");
    private static final Pattern LISTENING = Pattern.compile("listening for workers on (127\\.0\\.0\\.1:\\d+);");

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final Map<Process, Path> logFiles = new ConcurrentHashMap<>();
    private final String testName;

    DatabaseLockIT(TestInfo info) throws IOException {
        this.testName = info.getTestMethod().orElseThrow().getName();
        assertThat(JAR).as("the shaded jar, built by `mvn package`").isRegularFile();
        Files.createDirectories(LOGS);
    }

    @AfterEach
    void tearDown() {
        processes.forEach(Process::destroyForcibly);
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
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "coordinator", "--suite", suite.toString(), "--db", db.toString(),
                "--listen", "127.0.0.1:0", "--wait-for-workers", "5m");
        Path logFile = LOGS.resolve(testName + "-" + processes.size() + ".log");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logFile.toFile());
        builder.environment().remove("PANOPTES_TOKEN");
        Process p = builder.start();
        processes.add(p);
        logFiles.put(p, logFile);
        return p;
    }

    /** Waits for the coordinator to say where it listens, and returns that {@code host:port}. */
    private String awaitListening(Process p) throws IOException {
        await().atMost(PATIENCE).until(() -> LISTENING.matcher(log(p)).find() || !p.isAlive());
        Matcher m = LISTENING.matcher(log(p));
        assertThat(m.find()).as("the coordinator listens; its output:%n%s", log(p)).isTrue();
        return m.group(1);
    }

    private String log(Process p) throws IOException {
        return Files.readString(logFiles.get(p), StandardCharsets.UTF_8);
    }

    private void assertExitCode(Process p, int expected) throws Exception {
        boolean exited = p.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(exited).as("exited within %s s; its output:%n%s", PATIENCE.toSeconds(), log(p)).isTrue();
        assertThat(p.exitValue()).as("exit code; output:%n%s", log(p)).isEqualTo(expected);
    }
}
