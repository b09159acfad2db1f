package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failed answer (the model API refused one vignette's request) is listed by {@code report} with
 * its reason, and the failed jobs section does not say "None." beside it. {@code eval} against the
 * stub model API, whose context is {@link StubModelServer#CONTEXT_TOKENS} tokens.
 */
class ReportFailedAnswersCommandTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 4);

    @Test
    void theReportListsAFailedAnswerWithItsReasonAndDoesNotSayNoneFailed() throws Exception {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            String prompt = i == 2 ? "word ".repeat(StubModelServer.CONTEXT_TOKENS + 100) + "What is 3 + 1?"
                    : "What is " + i + " + 1?";
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"").append(prompt)
                    .append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("long.jsonl"), lines);
        Path db = dir.resolve("failed.db");
        EvalRun run = EvalRun.of("eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", db.toString(), "--scorer", "numeric",
                "--max-error-rate", "0.5");
        assertThat(run.exit()).as(run.console()).isZero();

        Path report = dir.resolve("report.html");
        EvalRun written = EvalRun.of("report", "--db", db.toString(), "--out", report.toString());
        assertThat(written.exit()).as(written.console()).isZero();
        String html = Files.readString(report, StandardCharsets.UTF_8);
        String failedJobs = html.substring(html.indexOf("<h3>Failed jobs</h3>"));
        assertThat(failedJobs).as("the failed jobs section").doesNotContain("None.")
                .contains("No job failed for good; 1 answer failed (below).");
        assertThat(html).contains("<h3>Failed answers</h3>")
                .containsPattern("<tr class=\"failed-answer\" data-run=\"[0-9a-f]{16}\"><td>" + StubModelServer.MODEL
                        + "</td><td>v2</td><td class=\"num\">0</td><td>[^<]*context[^<]*</td></tr>");
    }
}
