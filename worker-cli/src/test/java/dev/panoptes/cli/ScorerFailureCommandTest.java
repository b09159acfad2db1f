package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval --scorer regex:...}: an answer the scorer cannot score (Java's regex engine recurses
 * once per repetition of a group with alternatives, and overflows the stack on a long answer) is
 * that answer's own trouble: it is stored, unscored with the reason, the answers around it are
 * scored, and the run ends normally, also when run again. In process, with the stub model API,
 * which echoes any prompt that is not arithmetic as {@code "re: <prompt>"}.
 */
class ScorerFailureCommandTest {
    /** One word (one token to the stub) of 40,000 characters, echoed back as the answer. */
    private static final String LONG = "a".repeat(40_000);

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void anAnswerTheRegexCannotScoreIsStoredUnscoredWithTheReasonAndTheRunGoesOn() throws Exception {
        Path suite = dir.resolve("poison.jsonl");
        Files.write(suite, List.of(
                "{\"id\": \"v1\", \"prompt\": \"ab\", \"expected\": \"ab\"}",
                "{\"id\": \"v2\", \"prompt\": \"ba\", \"expected\": \"ab\"}",
                "{\"id\": \"long\", \"prompt\": \"" + LONG + "\", \"expected\": \"a\"}",
                "{\"id\": \"v3\", \"prompt\": \"abba\", \"expected\": \"abba\"}",
                "{\"id\": \"v4\", \"prompt\": \"bab\", \"expected\": \"bab\"}"));
        Path db = dir.resolve("poison.db");

        for (int round = 1; round <= 2; round++) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            // One job of all five, so the long answer shares its store batch with the others.
            int exit = WorkerMain.run(new String[] {"eval", "--suite", suite.toString(), "--model",
                    StubModelServer.MODEL, "--model-api", stub.baseUrl().toString(), "--db", db.toString(),
                    "--scorer", "regex:((?:a|b)+)", "--job-size", "5"}, new PrintWriter(out, true),
                    new PrintWriter(err, true), Map.of());

            assertThat(exit).as("round %d: eval's exit; its console:%n%s%nits summary:%n%s", round, err, out)
                    .isZero();
            assertThat(err.toString()).doesNotContain("StackOverflowError").doesNotContain("failed for good");
            assertThat(out.toString()).as("round %d summary", round).contains("1 answer unscored");
        }

        Map<String, StoredRecord> byVignette = new HashMap<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(r -> byVignette.put(r.record().vignetteId(), r));
        }
        assertThat(byVignette).containsOnlyKeys("v1", "v2", "long", "v3", "v4");
        StoredRecord poisoned = byVignette.get("long");
        assertThat(poisoned.record().response()).hasSize(LONG.length() + "re: ".length());
        assertThat(poisoned.score()).as("the long answer's score entry").isNotNull();
        assertThat(poisoned.score().score()).as("the long answer is unscored").isNull();
        assertThat(poisoned.score().explanation()).startsWith("not scored: ").contains("40,004-character answer");
        assertThat(byVignette.get("v1").score().score()).isEqualTo(1.0);
        assertThat(byVignette.get("v2").score().score()).isEqualTo(0.0);
        assertThat(byVignette.get("v3").score().score()).isEqualTo(1.0);
        assertThat(byVignette.get("v4").score().score()).isEqualTo(1.0);
    }
}
