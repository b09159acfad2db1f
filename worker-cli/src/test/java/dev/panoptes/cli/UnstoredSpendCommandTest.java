package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.report.ReportPage;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerProcess;
import dev.panoptes.worker.WorkerSettings;
import org.junit.jupiter.api.AfterEach;
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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Tokens paid for but not stored: {@code eval} against a model API that answers every prompt with
 * 100 prompt and 10 completion tokens, except one that it answers 503 every time. That vignette is
 * the last of its job, so each attempt of the job pays for the three calls before it, whose answers
 * are not stored when the job fails. The summary, its JSON and the budget ({@code --max-cost})
 * count those tokens; the store keeps them with each sitting, so that {@code runs show}, the report
 * and a later sitting's budget count them too.
 */
class UnstoredSpendCommandTest {
    private static final Pattern LISTENING = Pattern.compile("listening for workers on [^:]+:(\\d+)");

    @TempDir
    Path dir;

    /** Calls answered 200 (the 503s, retried by the worker's client, left out). */
    private final AtomicInteger answered = new AtomicInteger();
    @RegisterExtension
    final ScriptedModelApi api = new ScriptedModelApi(this::complete);
    /** The coordinator and the worker of the remote test. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void theTokensOfAFailedAttemptsAnsweredCallsAreSpentInTheSummaryItsJsonAndTheBudget() throws Exception {
        Path suite = suiteFailingAt(7);
        Path json = dir.resolve("summary.json");

        // One request at a time: the failing vignette is sent only once the three before it answered.
        EvalRun run = EvalRun.of(eval(suite, "--job-size", "4", "--requests", "1", "--max-attempts", "2",
                "--price", "m=1000/1000", "--max-cost", "100", "--summary-json", json.toString()));

        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);
        // Stored: the first job's 4 answers, 110 tokens each. Not stored: 3 answered calls on each of 2 attempts.
        assertThat(run.out()).as(run.console()).contains("answers:     4 of 8 stored")
                .contains("tokens:      440 spent by this run's model calls")
                .contains("not stored:  660 tokens (600 prompt + 60 completion), 0.6600 USD, spent by the calls of"
                        + " 2 attempts that failed after them")
                .contains("budget:      1.1000 of 100.0000 USD spent (--max-cost)");
        JsonNode summary = EvalRun.summary(json);
        JsonNode notStored = summary.get("notStored");
        assertThat(notStored.get("attempts").asLong()).isEqualTo(2);
        assertThat(notStored.get("tokens").get("prompt").asLong()).isEqualTo(600);
        assertThat(notStored.get("tokens").get("completion").asLong()).isEqualTo(60);
        assertThat(notStored.get("costUsd").asDouble()).isCloseTo(0.66, within(1e-9));
        assertThat(summary.get("costUsd").asDouble()).as("the stored answers' cost").isCloseTo(0.44, within(1e-9));
        assertThat(summary.get("budget").get("spentUsd").asDouble()).isCloseTo(1.10, within(1e-9));
        assertThat(summary.get("budget").get("notStoredUsd").asDouble()).isCloseTo(0.66, within(1e-9));
    }

    @Test
    void aBudgetTheFailedAttemptsSpendStopsTheRunBeforeTheNextJob() throws Exception {
        // The failing job first: its worst case (about 0.15 USD: prompts of some 30 bytes, answers of at
        // most 4 tokens) fits in 0.2 USD, the second job's (about 0.14) not beside it, so that one waits.
        // The failed attempt spends 0.33 USD (the stub's usage is far past the bound): the budget is
        // spent and the second job is never sent.
        Path suite = suiteFailingAt(3);
        Path json = dir.resolve("summary.json");

        EvalRun run = EvalRun.of(eval(suite, "--job-size", "4", "--requests", "1", "--max-attempts", "1",
                "--max-tokens", "4", "--price", "m=1000/1000", "--max-cost", "0.2", "--summary-json",
                json.toString()));

        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        JsonNode summary = EvalRun.summary(json);
        assertThat(summary.get("budget").get("spentUsd").asDouble()).as(run.console()).isCloseTo(0.33, within(1e-9));
        assertThat(summary.get("budget").get("exceeded").asBoolean()).isTrue();
        assertThat(run.out()).contains("budget:      the run stopped: 0.3300 USD spent (0.3300 of it on calls of"
                + " failed attempts, whose answers were not stored)");
        assertThat(answered.get()).as("the second job was never sent").isEqualTo(3);
    }

    @Test
    void aRemoteWorkersFailedFrameCarriesWhatTheJobSpentToTheCoordinatorsSummary() throws Exception {
        Path suite = suiteFailingAt(7);
        Path json = dir.resolve("summary.json");
        String out = runRemotely(suite, json, "2");
        assertThat(out).contains("not stored:  660 tokens (600 prompt + 60 completion), 0.6600 USD, spent by the calls"
                + " of 2 attempts that failed after them");
        JsonNode summary = EvalRun.summary(json);
        assertThat(summary.get("budget").get("spentUsd").asDouble()).isCloseTo(1.10, within(1e-9));
    }

    @Test
    void anAnswerTooLargeToSendStillCountsWhatItsCallsSpent() throws Exception {
        // The second job's last answer is some 70,000 bytes, past the worker's 64 KiB frame limit:
        // the worker sends the job's failure instead, and its four answered calls are paid for.
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?")
                    .append(i == 7 ? " HUGE" : "").append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("suite.jsonl"), lines);
        Path json = dir.resolve("summary.json");
        String out = runRemotely(suite, json, "1", "--max-frame-bytes", "65536");
        assertThat(out).contains("answers:     4 of 8 stored")
                .contains("not stored:  440 tokens (400 prompt + 40 completion), 0.4400 USD, spent by the calls"
                        + " of 1 attempt that failed after them");
        JsonNode summary = EvalRun.summary(json);
        assertThat(summary.get("budget").get("spentUsd").asDouble()).isCloseTo(0.88, within(1e-9));
    }

    @Test
    void whatEachSittingSpentOnAnswersNeverStoredIsKeptForRunsShowTheReportAndALaterBudget() throws Exception {
        Path suite = suiteTooLargeAt(7);
        // Two sittings of one run: each sends the second job again, whose last answer is too large
        // to send, so each pays for four answered calls (440 tokens, 0.44 USD) that are not stored.
        String first = runRemotely(suite, dir.resolve("first.json"), "1", "--max-frame-bytes", "65536");
        String second = runRemotely(suite, dir.resolve("second.json"), "1", "--max-frame-bytes", "65536");
        String runId = EvalRun.runIdOf(first);
        assertThat(EvalRun.runIdOf(second)).as("the second sitting resumes the run").isEqualTo(runId);
        assertThat(second).contains("answers:     4 of 8 stored").contains("not stored:  440 tokens");

        String shown = EvalRun.succeeded("runs", "show", "--db", fleetDb(), runId);
        assertThat(shown).as("runs show adds up both sittings")
                .contains("not stored:  880 tokens (800 prompt + 80 completion) spent by the calls of 2 attempts over 2"
                        + " sittings whose answers were never stored");

        Path html = dir.resolve("report.html");
        EvalRun.succeeded("report", "--db", fleetDb(), "--run", runId, "--price", "m=1000/1000", "--out", html.toString());
        String page = Files.readString(html);
        assertThat(page).contains("Not stored: 880 tokens (800 prompt + 80 completion), 0.8800 USD, spent by the calls"
                + " of 2 attempts over 2 sittings whose answers were never stored");
        JsonNode notStored = new ObjectMapper().readTree(new ReportPage(page).dataBlock()).get("runs").get(0)
                .get("notStored");
        assertThat(notStored.get("attempts").asLong()).isEqualTo(2);
        assertThat(notStored.get("tokens").get("prompt").asLong()).isEqualTo(800);
        assertThat(notStored.get("tokens").get("completion").asLong()).isEqualTo(80);
        assertThat(notStored.get("sittings").asInt()).isEqualTo(2);
        assertThat(notStored.get("models").get(0).get("model").asText()).isEqualTo("m");

        // A third sitting with a budget of 1 USD: the stored answers cost 0.44 USD, the answers never
        // stored 0.88 more, so the budget is spent before any job is sent.
        int calls = answered.get();
        Path third = dir.resolve("third.json");
        String out = runRemotely(suite, third, "1", List.of("--max-frame-bytes", "65536"), CoordinatorRun.EXIT_BUDGET,
                "--max-cost", "1");
        JsonNode budget = EvalRun.summary(third).get("budget");
        assertThat(budget.get("spentUsd").asDouble()).as(out).isCloseTo(1.32, within(1e-9));
        assertThat(budget.get("notStoredUsd").asDouble()).isCloseTo(0.88, within(1e-9));
        assertThat(out).contains("budget:      the run stopped: 1.3200 USD spent (0.8800 of it on calls of failed"
                + " attempts, whose answers were not stored)");
        assertThat(answered.get()).as("no job was sent").isEqualTo(calls);
    }

    /**
     * Runs {@code suite} with the coordinator command and one worker (given {@code workerArgs}) on
     * the scripted API; the run ends incomplete. @return the coordinator's standard output
     */
    private String runRemotely(Path suite, Path json, String maxAttempts, String... workerArgs) throws Exception {
        return runRemotely(suite, json, maxAttempts, List.of(workerArgs), CoordinatorRun.EXIT_INCOMPLETE,
                "--max-cost", "100");
    }

    /**
     * Runs {@code suite} with the coordinator command (given {@code coordinatorArgs} too) and one
     * worker (given {@code workerArgs}) on the scripted API into {@code fleet.db}; the run ends with
     * {@code exit}. @return the coordinator's standard output
     */
    private String runRemotely(Path suite, Path json, String maxAttempts, List<String> workerArgs, int exit,
                               String... coordinatorArgs) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> command = new ArrayList<>(List.of("coordinator", "--listen",
                "127.0.0.1:0", "--suite", suite.toString(), "--model", "m", "--db", fleetDb(),
                "--scorer", "numeric", "--job-size", "4", "--max-attempts", maxAttempts, "--price", "m=1000/1000",
                "--summary-json", json.toString(), "--no-progress"));
        command.addAll(List.of(coordinatorArgs));
        Future<Integer> coordinator = threads.submit(() -> WorkerMain.run(command.toArray(String[]::new),
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of()));
        await().atMost(Duration.ofSeconds(30)).until(() -> LISTENING.matcher(err.toString()).find() || coordinator.isDone());
        Matcher listening = LISTENING.matcher(err.toString());
        assertThat(listening.find()).as(err.toString()).isTrue();
        AtomicReference<WorkerSettings> parsed = new AtomicReference<>();
        List<String> args = new ArrayList<>(List.of("--coordinator", "127.0.0.1:" + listening.group(1),
                "--model-api", api.baseUrl(), "--model", "m", "--requests", "1"));
        args.addAll(workerArgs);
        int parsedExit = WorkerMain.newCommandLine(Map.of(), settings -> {
            parsed.set(settings);
            return 0;
        }).execute(args.toArray(String[]::new));
        assertThat(parsedExit).isZero();
        WorkerSettings settings = parsed.get();

        try (HttpModelClient client = WorkerProcess.modelClient(settings);
             WorkerLoop worker = new WorkerLoop(settings.coordinator(), settings.workerId(), settings.capacity(),
                     (AsyncJobRunner) WorkerProcess.runner(client, settings),
                     settings.options().withModels(settings.models()))) {
            Future<?> unused = threads.submit(() -> {
                worker.runForever();
                return null;
            });
            assertThat(coordinator.get(120, TimeUnit.SECONDS)).as("the coordinator's console:%n%s%s", err, out)
                    .isEqualTo(exit);
        }
        if (exit == CoordinatorRun.EXIT_INCOMPLETE) {
            assertThat(out.toString()).as(err.toString()).contains("not stored:");
        }
        return out.toString();
    }

    private String fleetDb() {
        return dir.resolve("fleet.db").toString();
    }



    /** Eight vignettes, the one at {@code huge} answered with 70,000 characters, too large to send. */
    private Path suiteTooLargeAt(int huge) throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?")
                    .append(i == huge ? " HUGE" : "").append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        return Files.writeString(dir.resolve("suite.jsonl"), lines);
    }

    /** Eight vignettes, the one at {@code failing} answered 503 every time. */
    private Path suiteFailingAt(int failing) throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?")
                    .append(i == failing ? " UNAVAILABLE" : "").append("\",\"expected\":\"").append(i + 1)
                    .append("\"}\n");
        }
        return Files.writeString(dir.resolve("suite.jsonl"), lines);
    }

    private String[] eval(Path suite, String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", suite.toString(), "--db",
                dir.resolve("r.db").toString(), "--model", "m", "--model-api",
                api.baseUrl(), "--scorer", "numeric", "--no-progress"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /**
     * 100 prompt and 10 completion tokens an answer; a prompt holding UNAVAILABLE is answered 503,
     * always; one holding HUGE with 70,000 characters.
     */
    private void complete(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        if (body.contains("UNAVAILABLE")) {
            // As OpenAI's API does: the client waits what the server says, not its own backoff of
            // seconds (the backoff is HttpModelClientTest's; here it only made the test slow).
            exchange.getResponseHeaders().set("retry-after-ms", "5");
            ScriptedModelApi.send(exchange, 503, "{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}");
            return;
        }
        answered.incrementAndGet();
        String content = body.contains("HUGE") ? "1".repeat(70_000) : "1";
        ScriptedModelApi.send(exchange, 200, "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                + "\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10,\"total_tokens\":110}}");
    }
}
