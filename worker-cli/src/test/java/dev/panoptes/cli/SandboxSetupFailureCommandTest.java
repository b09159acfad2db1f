package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
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
 * A sandboxed vignette whose {@code setup} command fails, as a user meets it in {@code eval}: the
 * setup would fail the same way on any worker (the same files, the same commands), so it is the
 * vignette's failed answer, not the worker's fault, and the run goes on; what is logged and
 * stored says that the setup failed, with the command's exit status and the head of what it
 * printed, never that the model API refused anything.
 */
class SandboxSetupFailureCommandTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 16);

    private final LogCapture log = LogCapture.everything();

    @AfterEach
    void closeLog() {
        log.close();
    }

    @Test
    void aFailingSetupIsTheVignettesFailedAnswerSayingSoWithItsExitStatusAndOutput() throws Exception {
        Path suite = dir.resolve("agent.jsonl");
        Files.writeString(suite, """
                {"id": "good", "prompt": "Write the largest number of numbers.txt to answer.txt. (`sort -n numbers.txt | tail -n 1 > answer.txt`, then `cat answer.txt`.)", "sandbox": {"tools": ["bash", "submit"], "files": {"numbers.txt": "3\\n9\\n"}, "check": "test \\"$(cat answer.txt)\\" = 9"}}
                {"id": "broken", "prompt": "Count the files. (`ls | wc -l`)", "sandbox": {"tools": ["bash", "submit"], "setup": ["echo fetching data; echo 'curl: (6) Could not resolve host: example.org' >&2; exit 6"], "check": "true"}}
                """);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("run.db").toString(),
                "--sandboxes", "1", "--no-progress"}, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());

        String summary = out.toString();
        assertThat(summary).as("console:%n%s%nsummary:%n%s", err, summary)
                .contains("2 of 2 stored (1 of them a failed answer, below), 0 missing")
                .contains("failed answers: 1 of 2 for " + StubModelServer.MODEL + " (broken: ")
                .contains("its setup command 'echo fetching data;")
                .contains("failed with exit status 6")
                .contains("Could not resolve host: example.org");
        assertThat(exit).as("every job completed, with a failed answer past --max-error-rate 0").isEqualTo(5);

        List<String> warned = log.messagesContaining("'broken'");
        assertThat(warned).as("%s", log.lines()).singleElement().asString()
                .contains("its sandbox setup failed").contains("stored as a failed answer")
                .contains("exit status 6").contains("Could not resolve host")
                .doesNotContain("model API");
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("run.db"))) {
            store.forEachRecord(records::add);
        }
        assertThat(records).hasSize(2);
        assertThat(records).filteredOn(r -> r.record().vignetteId().equals("broken")).singleElement()
                .satisfies(r -> assertThat(r.record().error()).contains("its setup command")
                        .contains("exit status 6").contains("Could not resolve host").doesNotContain("model API"));
        assertThat(records).filteredOn(r -> r.record().vignetteId().equals("good")).singleElement()
                .satisfies(r -> assertThat(r.record().isFailed()).isFalse());
    }
}
