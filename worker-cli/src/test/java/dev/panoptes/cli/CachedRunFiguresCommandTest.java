package dev.panoptes.cli;

import dev.panoptes.report.StreamedFigures;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * The figures a user reads about a run the response cache served, as the commands print them
 * against the stub model: whose tokens the summary and {@code runs show} count (this run's model
 * calls, and apart from them what the cached answers hold), and money as decimals in the summary,
 * its JSON and the {@code results} exports. The stub answers "What is A + B? Answer with the
 * number only." (10 words, 10 prompt tokens) with one word: at 0.15/0.60 USD per million, an
 * answer costs 10 x 0.15 + 1 x 0.60 = 2.1 micro-USD, which a double writes 0.0000021000000000000002.
 */
class CachedRunFiguresCommandTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();
    private static final String PRICE = StubModelServer.MODEL + "=0.15/0.60";

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ZERO, 8);

    @Test
    void aCachedRunSaysItsTokensWereSpentByTheRunThatAnsweredFirstAndMoneyIsPrintedAsDecimals() throws Exception {
        String first = eval("first", dir.resolve("first.json"));
        assertThat(first).contains("tokens:      33 spent by this run's model calls (30 prompt + 3 completion)\n")
                .doesNotContain("more in the").contains("cost:        0.0000063 USD");
        long asked = stub.requestCount();

        String second = eval("second", dir.resolve("second.json"));

        assertThat(stub.requestCount()).as("the second run is served by the cache").isEqualTo(asked);
        String tokens = "  tokens:      0 spent by this run's model calls (0 prompt + 0 completion)\n"
                + "               33 more in the 3 answers the cache served (30 prompt + 3 completion), spent by"
                + " the run that answered them\n";
        assertThat(second).contains(tokens).contains("cost:        0.0000 USD");
        String secondId = EvalRun.runIdOf(second);
        String shown = EvalRun.succeeded("runs", "show", "--db", db(), secondId);
        assertThat(shown).contains(tokens);

        JsonNode summary = new ObjectMapper().readTree(dir.resolve("second.json").toFile());
        assertThat(summary.get("tokens").get("total").asLong()).isZero();
        assertThat(summary.get("cache").get("tokens").get("total").asLong()).isEqualTo(33);
        assertThat(Files.readString(dir.resolve("first.json"))).contains("\"costUsd\" : 0.0000063,")
                .doesNotContain("E-").doesNotContain("0000000001");

        String firstId = EvalRun.runIdOf(first);
        String jsonl = EvalRun.succeeded("results", "--db", db(), "--run", firstId, "--price", PRICE);
        assertThat(jsonl.lines()).hasSize(3).allSatisfy(line -> assertThat(line).endsWith(",\"costUsd\":0.0000021}"));
        String cachedJsonl = EvalRun.succeeded("results", "--db", db(), "--run", secondId, "--price", PRICE);
        assertThat(cachedJsonl.lines()).hasSize(3).allSatisfy(line -> assertThat(line).endsWith(",\"costUsd\":0}"));
        List<String> csv = new ArrayList<>(EvalRun.succeeded("results", "--db", db(), "--run", firstId, "--price", PRICE,
                "--format", "csv").lines().toList());
        assertThat(csv.remove(0)).endsWith(",costUsd");
        assertThat(csv).hasSize(3).allSatisfy(row -> assertThat(row).endsWith(",0.0000021"));
        // Both runs' figures, streamed from the store, are those of every answer loaded (cache hits too).
        assertThat(StreamedFigures.assertAgree(dir.resolve("runs.db"))).isEqualTo(2);
    }

    private String eval(String label, Path summaryJson) {
        return EvalRun.succeeded("eval", "--suite", SUITE.toString(), "--db", db(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--scorer", "numeric", "--limit", "3", "--temperature", "0",
                "--run-label", label, "--price", PRICE, "--summary-json", summaryJson.toString(), "--no-progress");
    }

    private String db() {
        return dir.resolve("runs.db").toString();
    }


}
