package dev.panoptes.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code .ci/postgres start DIR} prints what a user pastes after a {@code worker.jar} command:
 * {@code --db URL --db-password-file FILE}, which {@code --db} takes (no password in the URL), and
 * a store is made there through the CLI. Runs the script itself, against the machine's PostgreSQL.
 */
class CiPostgresScriptTest {
    private static final Path SCRIPT = Path.of("..", ".ci", "postgres").toAbsolutePath().normalize();

    @Test
    void theLineItPrintsIsWhatTheDbOptionsTake() throws Exception {
        // Right under the temporary folder, as .ci/test puts it: under root the cluster belongs to the
        // postgres user, who cannot enter a test's own (mode 700) temporary folder.
        Path cluster = Path.of(System.getProperty("java.io.tmpdir"),
                "panoptes-ci-pg-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        String printed = script("start", cluster);
        try {
            assertThat(printed).matches("--db postgresql://panoptes@127\\.0\\.0\\.1:\\d+/postgres --db-password-file "
                    + "\\S+/password");
            assertThat(printed).doesNotContain("password=");
            List<String> args = new ArrayList<>(List.of("runs"));
            args.addAll(List.of(printed.split(" ")));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = WorkerMain.run(args.toArray(String[]::new), new PrintWriter(out, true),
                    new PrintWriter(err, true), Map.of());
            assertThat(exit).as("runs %s: %s", printed, err).isZero();
            assertThat(out.toString()).contains("holds no run");
        } finally {
            script("stop", cluster);
            try (var files = Files.walk(cluster)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static String script(String command, Path cluster) throws Exception {
        Path output = Files.createTempFile("ci-postgres", ".out");
        Path errors = Files.createTempFile("ci-postgres", ".err");
        try {
            Process p = new ProcessBuilder("bash", SCRIPT.toString(), command, cluster.toString())
                    .redirectOutput(output.toFile()).redirectError(errors.toFile()).start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(".ci/postgres %s ended in 60 s", command).isTrue();
            assertThat(p.exitValue()).as(".ci/postgres %s: %s", command,
                    Files.readString(errors, StandardCharsets.UTF_8)).isZero();
            return Files.readString(output, StandardCharsets.UTF_8).strip();
        } finally {
            Files.deleteIfExists(output);
            Files.deleteIfExists(errors);
        }
    }
}
