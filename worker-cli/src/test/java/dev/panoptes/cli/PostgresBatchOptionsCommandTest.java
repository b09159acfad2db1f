package dev.panoptes.cli;

import dev.panoptes.control.store.TestPostgres;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval --db postgresql://...?reWriteBatchedInserts=true}, pgjdbc's recommended option for
 * batch inserts (its driver then answers no count per row), gives the same summary as the plain
 * URL: every answer stored and scored, none taken for a duplicate. A real PostgreSQL server
 * ({@link TestPostgres}) and the stub model API.
 */
class PostgresBatchOptionsCommandTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void reWriteBatchedInsertsGivesTheFiguresOfThePlainUrl() throws Exception {
        String plain = eval(TestPostgres.freshDatabase(), "");
        String rewritten = eval(TestPostgres.freshDatabase(), "?reWriteBatchedInserts=true&prepareThreshold=0");

        assertThat(figures(plain)).as("plain URL:%n%s", plain).anyMatch(l -> l.contains("accuracy"))
                .contains("answers:     80 of 80 stored, 0 missing").anyMatch(l -> l.endsWith("duplicates ignored: 0 records"))
                .noneMatch(l -> l.contains("unscored"));
        assertThat(figures(rewritten)).as("with reWriteBatchedInserts:%n%s%nplain:%n%s", rewritten, plain)
                .isEqualTo(figures(plain));
    }

    private String eval(TestPostgres.Database db, String options) throws Exception {
        String url = "postgresql://" + db.user() + "@" + db.url().substring("jdbc:postgresql://".length()) + options;
        Path password = Files.writeString(dir.resolve(db.name() + ".password"), db.password() + "\n");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", SUITE.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", url, "--db-password-file", password.toString(),
                "--job-size", "4", "--epochs", "2", "--run-label", "same"}, new PrintWriter(out, true),
                new PrintWriter(err, true), Map.of());
        assertThat(exit).as("eval's exit on %s; its console:%n%s", url, err).isZero();
        return out.toString();
    }

    /** The summary's lines but those of time and the database's name. */
    private static List<String> figures(String summary) {
        List<String> lines = new ArrayList<>();
        for (String line : summary.split("\n")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("latency:") && !l.contains("panoptes_test_")) {
                lines.add(l.replaceFirst("^Run complete in [0-9.]+ \\S+ ", "Run complete "));
            }
        }
        return lines;
    }
}
