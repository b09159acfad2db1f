package dev.panoptes.cli;

import dev.panoptes.report.StreamedFigures;
import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@code eval --task FILE.yaml}: an lm-eval task file run as it is against the stub model, with
 * acc and acc_norm and their intervals; lm-eval's own arc_easy.yaml, unchanged, with
 * {@code --dataset-file}; its lambada_openai.yaml (output_type loglikelihood), unchanged, with
 * perplexity and is_greedy acc recomputed from the stored log-likelihoods; and a task that uses what Panoptes cannot run refused before any
 * model call, naming the field, its line and what to do.
 */
class TaskFileEvalTest {
    private static final Path TASK = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void theShippedTaskPrintsAccAndAccNormWithIntervalsOneRequestPerDocument() throws Exception {
        EvalRun r = stub.eval("--task", TASK.toString(), "--db", dir.resolve("t.db").toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        assertThat(r.out()).containsPattern("accuracy \\(acc, scoring 1\\)[^\\n]*95% CI: Wilson")
                .containsPattern("acc_norm [^\\n]*\\n\\s+" + StubModelServer.MODEL + ": 0\\.\\d+ \\(95% CI 0\\.\\d+-[01]\\.\\d+");
        assertThat(r.err()).contains("arithmetic-task.yaml: 40 vignettes");
        // The capability check, then one request per document (its choices as one list of prompts).
        assertThat(stub.requestCount()).isEqualTo(40 + 1);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("t.db"))) {
            assertThat(store.recordCount()).isEqualTo(40);
        }
        // The summary's figures, streamed from the store, are those of every answer loaded.
        assertThat(StreamedFigures.assertAgree(dir.resolve("t.db"))).isEqualTo(1);
    }

    @Test
    void aModelApiWithoutPromptLogprobsEndsTheRunWithExit8NamingTheRefusalInsteadOfWaiting() throws Exception {
        stub.servePromptLogprobs(false);
        Path db = dir.resolve("nolp.db");
        // The first refusal ends the run: no quarantine, no 30 s probation before exit 8 (the
        // bound leaves room for a slow machine's start-up, not for a probation).
        long started = System.nanoTime();
        EvalRun r = assertTimeoutPreemptively(Duration.ofSeconds(60),
                () -> stub.eval("--task", TASK.toString(), "--db", db.toString()));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isEqualTo(8);
        assertThat(took).as("eval's time to exit 8").isLessThan(Duration.ofSeconds(15));
        assertThat(r.err() + r.out()).doesNotContainIgnoringCase("probation");
        // The capability check's one request, and no job sent to the model after its refusal.
        assertThat(stub.requestCount()).isEqualTo(1);
        assertThat(r.err()).contains("does not return prompt log-probabilities")
                .contains("no other worker can take its jobs")
                .contains("in " + db)
                .contains("vLLM")
                .contains("run the same command again");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isZero();
        }
        // Resumable: the same command against a server that returns them finishes the run.
        stub.servePromptLogprobs(true);
        long before = stub.requestCount();
        EvalRun again = stub.eval("--task", TASK.toString(), "--db", db.toString());
        assertThat(again.exit()).as("console:%n%s%nsummary:%n%s", again.err(), again.out()).isZero();
        assertThat(again.out()).contains("40 of 40 stored");
        assertThat(stub.requestCount() - before).as("the resumed run's capability check and documents")
                .isEqualTo(40 + 1);
    }

    @Test
    void lmEvalsOwnArcEasyYamlRunsUnchangedWithADatasetFile() throws Exception {
        Path arc = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "arc_easy.yaml")
                .toAbsolutePath().normalize();
        Path docs = arc.resolveSibling("arc_easy_test.jsonl");
        EvalRun r = stub.eval("--task", arc.toString(), "--dataset-file", docs.toString(), "--db",
                dir.resolve("arc.db").toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        assertThat(r.out()).contains("accuracy (acc").contains("acc_norm").contains("4 of 4 stored");
    }

    @Test
    void lmEvalsOwnLambadaOpenaiYamlRunsUnchangedWithPerplexityAndIsGreedyAccRecomputableFromTheAnswers()
            throws Exception {
        Path lambada = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai.yaml")
                .toAbsolutePath().normalize();
        Path docs = lambada.resolveSibling("lambada_openai_test.jsonl");
        Path db = dir.resolve("lambada.db");
        Path summary = dir.resolve("summary.json");
        EvalRun r = stub.eval("--task", lambada.toString(), "--dataset-file", docs.toString(), "--db", db.toString(),
                "--summary-json", summary.toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        assertThat(r.err()).contains("lambada_openai.yaml: 5 vignettes");
        // The capability check, then one request per document: its one continuation.
        assertThat(stub.requestCount()).isEqualTo(5 + 1);
        List<Double> lls = new ArrayList<>();
        int greedy = 0;
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT response FROM panoptes_records")) {
            while (rs.next()) {
                ChoiceLoglikelihoods answer = ChoiceLoglikelihoods.parse(rs.getString(1));
                assertThat(answer.continuations()).hasSize(1);
                assertThat(answer.continuations().get(0)).as("no delimiter before the target's own space")
                        .matches(" [a-z]+");
                lls.add(answer.loglikelihoods().get(0));
                greedy += answer.greedy().get(0) ? 1 : 0;
            }
        }
        assertThat(lls).hasSize(5);
        double mean = lls.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        double sd = Math.sqrt(lls.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum() / 4);
        double half = 2.7764451051977987 * sd / Math.sqrt(5); // t(0.975, 4)
        assertThat(r.out()).contains(String.format(Locale.ROOT, "accuracy (acc: is_greedy, whether the"
                        + " continuation is the model's greedy one, scoring 1)"))
                .contains(String.format(Locale.ROOT, "%s: %.3f (", StubModelServer.MODEL, greedy / 5.0))
                .contains("perplexity (loglikelihood: exp(-mean log-likelihood) of the continuations, lower is"
                        + " better); 95% CI: t interval on the mean log-likelihood, clustered by vignette, through"
                        + " exp(-x):")
                .contains(String.format(Locale.ROOT, "    %s: %.3f (95%% CI %.3f-%.3f, ", StubModelServer.MODEL,
                        Math.exp(-mean), Math.exp(-(mean + half)), Math.exp(-(mean - half))))
                .contains(String.format(Locale.ROOT, "mean ll %.4f, n=5)", mean))
                .doesNotContain("acc_norm");
        com.fasterxml.jackson.databind.JsonNode perplexity = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(summary.toFile()).path("models").get(0).path("perplexity");
        assertThat(perplexity.path("perplexity").asDouble()).isCloseTo(Math.exp(-mean), within(1e-9));
        assertThat(perplexity.path("ciLow").asDouble()).isCloseTo(Math.exp(-(mean + half)), within(1e-6));
        assertThat(perplexity.path("ciHigh").asDouble()).isCloseTo(Math.exp(-(mean - half)), within(1e-6));
        assertThat(perplexity.path("n").asInt()).isEqualTo(5);
        assertThat(perplexity.path("method").asText()).startsWith("t interval on the mean log-likelihood");
        assertThat(StreamedFigures.assertAgree(db)).isEqualTo(1);
    }

    @Test
    void aDryRunOfLambadaShowsEachContinuationRightAfterItsContextAsOnePrompt() throws Exception {
        Path lambada = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai.yaml")
                .toAbsolutePath().normalize();
        EvalRun r = stub.eval("--task", lambada.toString(), "--dataset-file",
                lambada.resolveSibling("lambada_openai_test.jsonl").toString(), "--db", dir.resolve("dry.db").toString(),
                "--dry-run");

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        String shown = r.out() + r.err();
        assertThat(shown).contains("(one continuation, lm-eval's loglikelihood: to /completions")
                // (ctx, doc_to_target): the target's own space, no target_delimiter before it.
                .contains("he finally caught a fish\" ]").doesNotContain("caught a  fish");
        assertThat(stub.requestCount()).isZero();
    }

    @Test
    void aGenerationTaskIsScoredByExactMatchAfterItsRegexFilter() throws Exception {
        Path task = dir.resolve("gen.yaml");
        Files.writeString(task, String.join("\n", "task: arith_gen", "dataset_path: json", "dataset_kwargs:",
                "  data_files:", "    test: " + TASK.resolveSibling("arithmetic-task.jsonl"), "test_split: test",
                "output_type: generate_until", "doc_to_text: \"{{question}}\"",
                "doc_to_target: \"{{choices[answer]}}\"", "generation_kwargs:", "  until: [\"\\n\\n\"]",
                "  max_gen_toks: 16", "filter_list:", "  - name: num", "    filter:", "      - function: regex",
                "        regex_pattern: \"(-?[0-9]+)\"", "      - function: take_first", "metric_list:",
                "  - metric: exact_match", ""));
        EvalRun r = stub.eval("--task", task.toString(), "--db", dir.resolve("g.db").toString());

        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        assertThat(r.out()).contains("accuracy (exact_match:{\"regex\":{\"regex_pattern\":\"(-?[0-9]+)\"}}, scoring 1)")
                .contains("40 of 40 stored");
        // The stub answers most arithmetic right: the filter's number, compared as lm-eval compares.
        assertThat(r.out()).containsPattern(StubModelServer.MODEL + ": 0\\.[6-9]\\d* \\(95% CI");
    }

    @Test
    void aTaskWithAPythonHookIsRefusedBeforeAnyModelCallNamingTheFieldAndLine() throws Exception {
        Path task = dir.resolve("hooked.yaml");
        Files.writeString(task, String.join("\n", "task: hooked", "dataset_path: some/hub_dataset",
                "test_split: test", "output_type: multiple_choice", "doc_to_text: !function utils.doc_to_text",
                "doc_to_target: label", "doc_to_choice: choices", "process_docs: !function utils.process_docs", ""));
        EvalRun r = stub.eval("--task", task.toString(), "--db", dir.resolve("h.db").toString());

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains(task + " line 5: doc_to_text is tagged !function")
                .contains("Panoptes runs no Python")
                .contains(task + " line 8: process_docs is not supported")
                .contains("give that file with --dataset-file");
        assertThat(stub.requestCount()).isZero();
        assertThat(dir.resolve("h.db")).doesNotExist();
    }

    @Test
    void aHubDatasetWithoutALocalFileIsRefusedSayingToGiveOne() throws Exception {
        Path arc = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "arc_easy.yaml")
                .toAbsolutePath().normalize();
        EvalRun r = stub.eval("--task", arc.toString(), "--db", dir.resolve("a.db").toString());

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("arc_easy.yaml line 4: dataset_path 'allenai/ai2_arc' is a Hugging Face hub"
                + " dataset").contains("--dataset-file FILE");
        assertThat(stub.requestCount()).isZero();
    }
}
