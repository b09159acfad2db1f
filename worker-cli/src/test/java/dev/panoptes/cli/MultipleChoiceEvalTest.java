package dev.panoptes.cli;

import dev.panoptes.report.StreamedFigures;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval} on a multiple-choice suite: every vignette asked by log-likelihood in one
 * {@code /v1/completions} request, scored acc and acc_norm with their intervals; and a model API
 * without prompt log-probabilities refused as the worker's fault, never scored at chance.
 */
class MultipleChoiceEvalTest {
    private static final Path SUITE = Path.of("..", "evals", "arithmetic-mc.jsonl").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void aMultipleChoiceSuiteIsAskedByLoglikelihoodOneRequestPerVignetteAndScoredAccAndAccNorm() throws Exception {
        EvalRun r = EvalRun.of("eval", "--suite", SUITE.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("mc.db").toString(), "--group-by",
                "operation");

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        String summary = r.out();
        assertThat(summary).contains("accuracy (acc").contains("acc_norm");
        // The stub favours the right answer about nine times in ten.
        assertThat(accuracy(summary)).isBetween(0.75, 1.0);
        // The capability check and one request per vignette (its four choices in one list of prompts).
        assertThat(stub.requestCount()).isEqualTo(40 + 1);
        assertThat(StreamedFigures.assertAgree(dir.resolve("mc.db"))).isEqualTo(1);
        String runId;
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("mc.db"))) {
            assertThat(store.recordCount()).isEqualTo(40);
            runId = store.runs().get(0).runId();
        }
        // runs show prints the summary's accuracy lines, acc_norm among them: it streams the
        // log-likelihood answers it is recomputed from (it once read no response, and had none).
        StringWriter shown = new StringWriter();
        assertThat(WorkerMain.run(new String[] {"runs", "show", "--db", dir.resolve("mc.db").toString(), runId},
                new PrintWriter(shown, true), new PrintWriter(new StringWriter(), true), Map.of())).isZero();
        String accNorm = summary.substring(summary.indexOf("  acc_norm ("));
        assertThat(shown.toString()).contains(accNorm.substring(0, accNorm.indexOf("\n  ", 3) < 0 ? accNorm.length()
                : accNorm.indexOf("\n  ", 3)));
    }

    @Test
    void anInspectDatasetReadsAsItIsAndTheFieldsNotUsedAreNamedOncePerSuite() throws Exception {
        Path suite = dir.resolve("inspect.jsonl");
        Files.writeString(suite, String.join("\n",
                "{\"id\": 1, \"input\": \"Question: What is 17 + 25?\\nAnswer:\", \"choices\": [\"41\", \"42\"],"
                        + " \"target\": \"B\", \"files\": {\"a.txt\": \"x\"}, \"metadata\": {\"k\": \"v\"}}",
                "{\"id\": 2, \"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\":"
                        + " \"Question: What is 3 * 4?\\nAnswer:\"}]}], \"choices\": [\"12\", \"13\", \"7\"],"
                        + " \"target\": 0, \"files\": {}, \"sandbox\": \"docker\"}",
                "{\"id\": 3, \"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\":"
                        + " \"What is 2 + 2?\"}]}], \"target\": [\"4\"]}") + "\n");
        EvalRun r = EvalRun.of("eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("inspect.db").toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        String console = r.err();
        assertThat(console).contains("fields not used, ignored: \"files\" (first on line 1), \"sandbox\" (first on"
                + " line 2)");
        assertThat(console.split("fields not used", -1)).as("said once").hasSize(2);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("inspect.db"))) {
            assertThat(store.recordCount()).isEqualTo(3);
        }
        assertThat(r.out()).contains("3 of 3 stored");
    }

    @Test
    void aSuiteOfOneChoiceVignettesIsScoredIsGreedyAccAndPerplexityWithoutAccNorm() throws Exception {
        Path suite = dir.resolve("continuations.jsonl");
        Files.writeString(suite, String.join("\n",
                "{\"id\": \"a\", \"prompt\": \"Question: What is 17 + 25?\\nAnswer:\", \"choices\": [\"42\"],"
                        + " \"expected\": \"0\"}",
                "{\"id\": \"b\", \"prompt\": \"The cat sat on the\", \"choices\": [\"mat\"], \"expected\": \"0\"}",
                "{\"id\": \"c\", \"prompt\": \"Once upon a\", \"choices\": [\"time\"], \"expected\": \"0\"}") + "\n");
        EvalRun r = stub.eval("--suite", suite.toString(), "--db", dir.resolve("c.db").toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        assertThat(r.out()).contains("3 of 3 stored").contains("accuracy (acc: is_greedy")
                .containsPattern("perplexity \\(loglikelihood[^\\n]*\\n\\s+" + StubModelServer.MODEL
                        + ": \\d+\\.\\d{3} \\(95% CI [^\\n]*n=3\\)")
                .doesNotContain("acc_norm").doesNotContain("acc_bytes");
    }

    @Test
    void aDryRunShowsTheLoglikelihoodRequestAsTheWorkerPostsIt() throws Exception {
        StringWriter out = new StringWriter();
        int exit = WorkerMain.run(new String[] {"coordinator", "--suite", SUITE.toString(), "--model", "m",
                "--limit", "1", "--dry-run"}, new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
                Map.of());

        assertThat(exit).as(out.toString()).isZero();
        assertThat(out.toString()).contains("to /completions, one prompt per choice")
                .contains("\"echo\" : true").contains("\"logprobs\" : 1")
                .contains("Question: What is 36 - 53?\\nAnswer: -17");
    }

    /** The first model's acc from the summary's accuracy line. */
    private static double accuracy(String summary) {
        for (String line : summary.split("\n")) {
            String t = line.strip();
            if (t.startsWith(StubModelServer.MODEL + ": ")) {
                return Double.parseDouble(t.substring(StubModelServer.MODEL.length() + 2).split(" ")[0]);
            }
        }
        throw new AssertionError("no accuracy line in:\n" + summary);
    }
}
