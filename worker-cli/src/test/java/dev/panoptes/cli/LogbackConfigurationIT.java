package dev.panoptes.cli;

import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The built worker.jar with a user's logback file ({@code -Dlogback.configurationFile}): the file
 * replaces the bundled configuration and its levels stand, unless {@code --log-level} is given.
 * Runs {@code stub-model}, which logs one INFO line when it listens, and stops it with SIGTERM.
 */
class LogbackConfigurationIT {
    private static final String LISTENING = "USERFILE INFO StubModelServer - stub model API listening on";

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void kill() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void aUsersLogbackFileReplacesTheBundledOneAndItsLevelsStand() throws Exception {
        Path config = userConfiguration("WARN", "INFO");
        Path log = dir.resolve("stub.log");

        Process stub = start(config, log, "stub-model", "--listen", "127.0.0.1:0", "--latency", "1ms");
        await().atMost(Duration.ofSeconds(30)).until(() -> read(log).contains(LISTENING) || !stub.isAlive());
        assertThat(read(log)).contains(LISTENING).doesNotContain(" INFO  StubModelServer");

        stub.destroy();
        assertThat(stub.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(stub.exitValue()).as("SIGTERM is a clean stop; output:%n%s", read(log)).isZero();
        assertThat(read(log)).contains("stub model API stopped after 0 answers");
    }

    @Test
    void theLogLevelOptionOverridesTheUsersFile() throws Exception {
        Path config = userConfiguration("INFO", "INFO");
        Path log = dir.resolve("stub.log");

        Process stub = start(config, log, "stub-model", "--listen", "127.0.0.1:0", "--log-level", "WARN");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> read(log).contains("stub model API at http://") || !stub.isAlive());

        assertThat(read(log)).contains("stub model API at http://").doesNotContain("stub model API listening on");
    }

    /** A logback file of the user's: its own pattern, the root and the stub's logger at the given levels. */
    private Path userConfiguration(String rootLevel, String stubLevel) throws IOException {
        return Files.writeString(dir.resolve("user-logback.xml"), """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>USERFILE %level %logger{0} - %msg%n</pattern></encoder>
                  </appender>
                  <logger name="dev.panoptes.demo.StubModelServer" level="STUB_LEVEL"/>
                  <root level="ROOT_LEVEL"><appender-ref ref="OUT"/></root>
                </configuration>
                """.replace("STUB_LEVEL", stubLevel).replace("ROOT_LEVEL", rootLevel), StandardCharsets.UTF_8);
    }

    private Process start(Path config, Path log, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(JarProcesses.jarJvmOptions());
        command.addAll(List.of("-Dlogback.configurationFile=" + config, "-jar", JarProcesses.JAR.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        processes.add(p);
        return p;
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
