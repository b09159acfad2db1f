package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --stop}, {@code --top-p} and {@code --request-field} as a user meets them: the request a
 * dry run prints, what the stub model server answers with a stop sequence, the refusal of a field
 * an option of its own sets; and epoch 0 sent alike with one epoch or several. Also a suite whose
 * JSON escapes make a lone UTF-16 surrogate, refused at load with its line.
 */
class SamplingOptionsCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ZERO, 4);

    @Test
    void theRequestCarriesTopPStopAndTheExtraFieldsAsJson() {
        EvalRun run = eval("--dry-run", "--top-p", "0.9", "--stop", "\\n\\n", "--stop", "Q:", "--request-field",
                "min_p=0.05", "--request-field", "chat_template_kwargs={\"enable_thinking\":false}",
                "--request-field", "guided_choice_name=plain text");

        assertThat(run.exit()).as(run.console()).isZero();
        String body = run.out().replaceAll("\\s+", "");
        assertThat(body).contains("\"top_p\":0.9").contains("\"stop\":[\"\\n\\n\",\"Q:\"]").contains("\"min_p\":0.05")
                .contains("\"chat_template_kwargs\":{\"enable_thinking\":false}")
                .contains("\"guided_choice_name\":\"plaintext\"");
    }

    @Test
    void epochZeroIsSentWithoutASeedWhetherTheRunHasOneEpochOrSeveral() {
        EvalRun one = eval("--dry-run", "--epochs", "1");
        EvalRun two = eval("--dry-run", "--epochs", "2");

        assertThat(one.exit()).as(one.console()).isZero();
        assertThat(two.exit()).as(two.console()).isZero();
        assertThat(firstRequest(two)).isEqualTo(firstRequest(one)).doesNotContain("\"seed\"");
    }

    @Test
    void aFieldAnOptionSetsIsRefusedNamingTheOption() {
        EvalRun run = eval("--request-field", "temperature=0");

        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("--request-field").contains("use --temperature");
        assertThat(stub.requestCount()).isZero();
    }

    @Test
    void theModelStopsBeforeAStopSequence() {
        Path db = dir.resolve("stop.db");

        EvalRun run = eval("--db", db.toString(), "--stop", "1");

        assertThat(run.exit()).as(run.console()).isIn(0, 6);
        List<String> answers = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord((StoredRecord r) -> answers.add(r.record().response()));
        }
        assertThat(answers).hasSize(40).noneMatch(a -> a.contains("1"));
    }

    @Test
    void aLoneSurrogateInASuiteIsRefusedAtLoadWithItsLine() throws Exception {
        Path suite = dir.resolve("lone.jsonl");
        Files.writeString(suite, "{\"id\": \"a\", \"prompt\": \"answer: ok\"}\n"
                + "{\"id\": \"b\", \"prompt\": \"answer: \\ud800\"}\n"
                + "{\"id\": \"c\", \"prompt\": \"answer: \\ud83d\\ude00\"}\n");

        EvalRun run = EvalRun.of("eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("lone.db").toString());

        assertThat(run.exit()).as(run.console()).isEqualTo(2);
        assertThat(run.err()).contains("lone.jsonl:2: the prompt (\\ud800 at character 9) holds a lone UTF-16"
                + " surrogate").doesNotContain("lone.jsonl:3");
        assertThat(stub.requestCount()).isZero();
    }

    private EvalRun eval(String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString()));
        if (!List.of(more).contains("--db")) {
            args.addAll(List.of("--db", dir.resolve("sampling.db").toString()));
        }
        args.addAll(List.of(more));
        return EvalRun.of(args.toArray(String[]::new));
    }

    /** The first request body a dry run printed. */
    private static String firstRequest(EvalRun run) {
        String out = run.out();
        int start = out.indexOf('{', out.indexOf("vignette math-001:"));
        int end = out.indexOf("\n}", start);
        return out.substring(start, end + 2);
    }
}
