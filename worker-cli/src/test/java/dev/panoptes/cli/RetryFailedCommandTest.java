package dev.panoptes.cli;

import com.sun.net.httpserver.HttpExchange;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.coordinator.CoordinatorRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval --retry-failed} as a user runs it: a vignette the model API refused (HTTP 400, a
 * failed answer) stays failed on a plain resume, and is asked again, alone, with
 * {@code --retry-failed}, its new answer taking the failed one's place: each (vignette, epoch)
 * stored once, the figures counting it once. Against a scripted OpenAI-compatible API on loopback
 * that refuses the prompts holding "REFUSE" until told to stop.
 */
class RetryFailedCommandTest {
    private static final Pattern SUM = Pattern.compile("What is (\\d+) \\+ (\\d+)\\?");
    private static final Pattern PROMPT = Pattern.compile("\"content\"\\s*:\\s*\"([^\"]*)\"");

    @TempDir
    Path dir;

    private final AtomicBoolean refusing = new AtomicBoolean(true);
    /** The prompt of every chat completion asked. */
    private final Queue<String> asked = new ConcurrentLinkedQueue<>();
    @RegisterExtension
    final ScriptedModelApi api = new ScriptedModelApi(this::complete);

    @Test
    void aFailedAnswerIsAskedAgainOnlyWithRetryFailedAndTheNewAnswerReplacesIt() throws Exception {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?")
                    .append(i == 2 ? " REFUSE" : "").append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("suite.jsonl"), lines);

        Run first = eval(suite);
        assertThat(first.exit).as(first.err).isEqualTo(CoordinatorRun.EXIT_ERROR_RATE);
        assertThat(first.out).contains("answers:     4 of 4 stored (1 of them a failed answer, below)");
        assertThat(asked).hasSize(4);

        asked.clear();
        refusing.set(false);
        Run plain = eval(suite);
        assertThat(plain.exit).as("a plain resume keeps the failed answer").isEqualTo(CoordinatorRun.EXIT_ERROR_RATE);
        assertThat(asked).as("asked on a plain resume").isEmpty();

        Run retried = eval(suite, "--retry-failed");

        assertThat(retried.exit).as(retried.err).isZero();
        assertThat(asked).as("only the failed vignette is asked again").containsExactly("What is 2 + 1? REFUSE");
        assertThat(retried.err).contains("--retry-failed: 1 failed answer removed, to be asked again (the new answer"
                + " takes its place): v2 (m, epoch 0) had HTTP 400: This model's maximum context length is 16");
        assertThat(retried.out).contains("answers:     4 of 4 stored, 0 missing").doesNotContain("failed answer")
                .contains("m: 1.000 (95% CI").contains("n=4");
        List<StoredRecord> records = records();
        assertThat(records).hasSize(4).noneMatch(r -> r.record().isFailed());
        assertThat(records.stream().map(r -> r.record().vignetteId())).containsExactlyInAnyOrder("v0", "v1", "v2",
                "v3");
        assertThat(records).filteredOn(r -> r.record().vignetteId().equals("v2")).singleElement()
                .satisfies(r -> assertThat(r.score().score()).isEqualTo(1.0));

        asked.clear();
        Run again = eval(suite, "--retry-failed");
        assertThat(again.exit).isZero();
        assertThat(again.err).contains("holds no failed answer; nothing to ask again");
        assertThat(asked).isEmpty();
        assertThat(records()).hasSize(4);
    }

    private record Run(int exit, String out, String err) {
    }

    private Run eval(Path suite, String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", suite.toString(), "--db",
                dir.resolve("r.db").toString(), "--model", "m", "--model-api",
                api.baseUrl(), "--scorer", "numeric", "--job-size", "4",
                "--no-progress"));
        args.addAll(List.of(more));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true),
                Map.of());
        return new Run(exit, out.toString(), err.toString());
    }

    private List<StoredRecord> records() {
        List<StoredRecord> all = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(all::add);
        }
        return all;
    }

    /** The sum asked for; a prompt holding REFUSE is refused as too long while {@link #refusing}. */
    private void complete(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Matcher prompt = PROMPT.matcher(body);
        String text = prompt.find() ? prompt.group(1) : "";
        asked.add(text);
        if (text.contains("REFUSE") && refusing.get()) {
            ScriptedModelApi.send(exchange, 400, "{\"error\":{\"message\":\"This model's maximum context length is 16 tokens.\","
                    + "\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}");
            return;
        }
        Matcher sum = SUM.matcher(text);
        String answer = sum.find() ? Integer.toString(Integer.parseInt(sum.group(1)) + Integer.parseInt(sum.group(2)))
                : "?";
        ScriptedModelApi.send(exchange, 200, "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                + "\"message\":{\"role\":\"assistant\",\"content\":\"" + answer + "\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":6,\"completion_tokens\":1,\"total_tokens\":7}}");
    }
}
