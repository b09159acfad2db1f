package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run remembers the {@code --group-by} it was made with: {@code report}, {@code runs show} and the
 * summary of a later sitting break its accuracy down by that key without being told again, and a
 * key given to {@code report} still wins. {@code eval} against the stub model API, in process.
 */
class RecordedGroupByCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(2), 4);

    @Test
    void reportRunsShowAndAResumedSummaryUseTheRunsGroupByUnlessGivenAnother() throws Exception {
        Path db = dir.resolve("grouped.db");
        EvalRun first = eval(db, "--group-by", "topic");
        assertThat(first.exit()).as(first.console()).isZero();
        assertThat(first.out()).contains("topic=addition");
        java.util.regex.Matcher id = java.util.regex.Pattern.compile("new run ([0-9a-f]{16})").matcher(first.err());
        assertThat(id.find()).as(first.console()).isTrue();
        String run = id.group(1);

        Path report = dir.resolve("report.html");
        EvalRun written = EvalRun.of("report", "--db", db.toString(), "--out", report.toString());
        assertThat(written.exit()).as(written.console()).isZero();
        String html = Files.readString(report, StandardCharsets.UTF_8);
        assertThat(html).as("the report breaks the run down by the key it was made with")
                .contains("<h3>Accuracy by <code>topic</code></h3>").contains("data-group=\"addition\"")
                .contains("<select id=\"sample-group\">");

        EvalRun show = EvalRun.of("runs", "show", "--db", db.toString(), run);
        assertThat(show.exit()).as(show.console()).isZero();
        assertThat(show.out()).contains("topic=addition").contains("topic=subtraction");

        // Again without --group-by: the run is resumed (nothing left to ask) and keeps its key.
        EvalRun again = eval(db);
        assertThat(again.exit()).as(again.console()).isZero();
        assertThat(again.out()).as("the later sitting's summary").contains("topic=addition");
        assertThat(EvalRun.of("runs", "show", "--db", db.toString(), run).out()).containsPattern("Grouped by:\\s+topic");

        // A key given to report wins over the recorded one.
        EvalRun other = EvalRun.of("report", "--db", db.toString(), "--out", report.toString(), "--group-by",
                "level");
        assertThat(other.exit()).as(other.console()).isZero();
        assertThat(Files.readString(report, StandardCharsets.UTF_8))
                .contains("<h3>Accuracy by <code>level</code></h3>").doesNotContain("data-group=\"addition\"");
        EvalRun showOther = EvalRun.of("runs", "show", "--db", db.toString(), "--group-by", "level", run);
        assertThat(showOther.out()).contains("level=").doesNotContain("topic=");
    }

    @Test
    void aRunMadeWithoutGroupByShowsNoGroups() throws Exception {
        Path db = dir.resolve("plain.db");
        EvalRun run = eval(db);
        assertThat(run.exit()).as(run.console()).isZero();
        Path report = dir.resolve("plain.html");
        assertThat(EvalRun.of("report", "--db", db.toString(), "--out", report.toString()).exit()).isZero();
        assertThat(Files.readString(report, StandardCharsets.UTF_8)).doesNotContain("Accuracy by <code>")
                .doesNotContain("id=\"sample-group\"");
        java.util.regex.Matcher id = java.util.regex.Pattern.compile("new run ([0-9a-f]{16})").matcher(run.err());
        assertThat(id.find()).as(run.console()).isTrue();
        assertThat(EvalRun.of("runs", "show", "--db", db.toString(), id.group(1)).out()).doesNotContain("topic=")
                .containsPattern("Grouped by:\\s+none");
    }

    private EvalRun eval(Path db, String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", db.toString(), "--scorer", "numeric",
                "--limit", "8", "--job-size", "4"));
        args.addAll(List.of(more));
        return EvalRun.of(args.toArray(String[]::new));
    }
}
