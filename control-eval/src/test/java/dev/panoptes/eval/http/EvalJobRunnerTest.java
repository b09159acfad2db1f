package dev.panoptes.eval.http;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.local.LocalWorker;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

class EvalJobRunnerTest {
    private final FakeOpenAiServer server = new FakeOpenAiServer();
    private final HttpModelClient client = HttpModelClient.builder(server.baseUrl(), "gpt-test")
            .requestTimeout(Duration.ofSeconds(5))
            .maxAttempts(2)
            .backoffBase(Duration.ofMillis(1))
            .backoffCap(Duration.ofMillis(2))
            .build();

    @AfterEach
    void tearDown() {
        client.close();
        server.close();
    }

    private static Job threeVignettes(String id) {
        return new Job(JobId.of(id), new EvalSpec("capitals", List.of(
                new Vignette("fr", "Capital of France?"),
                new Vignette("de", "Capital of Germany?"),
                new Vignette("it", "Capital of Italy?")),
                new SpecParams("Answer in one word.", 0.0, 16, 7L)));
    }

    @Test
    void answersEachVignetteInSpecOrderWithOneRecordEach() throws Exception {
        server.enqueue(Reply.completion("gpt-test-0613", "Paris", "stop", 20, 1),
                Reply.completion("gpt-test-0613", "Berlin", "stop", 21, 2),
                Reply.completion("gpt-test-0613", null, "length", 22, 16));
        Job job = threeVignettes("job-1");

        JobOutcome outcome = new EvalJobRunner(client).run(job);

        assertThat(outcome.jobId()).isEqualTo(job.id());
        outcome.requireAnswers(job);
        assertThat(outcome.records()).extracting(ResponseRecord::vignetteId).containsExactly("fr", "de", "it");
        assertThat(outcome.records()).extracting(ResponseRecord::response).containsExactly("Paris", "Berlin", "");
        assertThat(outcome.records()).extracting(ResponseRecord::finishReason)
                .containsExactly("stop", "stop", "length");
        assertThat(outcome.records()).extracting(ResponseRecord::model).containsOnly("gpt-test-0613");
        assertThat(outcome.records()).extracting(ResponseRecord::usage)
                .containsExactly(new Usage(20, 1), new Usage(21, 2), new Usage(22, 16));
        assertThat(outcome.records()).allSatisfy(r -> assertThat(r.latencyMs()).isNotNull().isNotNegative());

        assertThat(server.prompts())
                .containsExactly("Capital of France?", "Capital of Germany?", "Capital of Italy?");
        assertThat(server.requests()).allSatisfy(r -> {
            assertThat(r.json().get("messages").get(0).get("content").asText()).isEqualTo("Answer in one word.");
            assertThat(r.json().get("max_tokens").asInt()).isEqualTo(16);
            assertThat(r.json().get("seed").asLong()).isEqualTo(7L);
        });
    }

    @Test
    void aVignetteTheApiRefusesGetsAFailedAnswerAndItsNeighboursAreStillAsked() throws Exception {
        for (boolean async : new boolean[] {false, true}) {
            server.enqueue(Reply.ok("Paris"), Reply.openAiError(400, "This model's maximum context length is 16"
                    + " tokens.", "invalid_request_error", "context_length_exceeded"), Reply.ok("Rome"));
            EvalJobRunner runner = new EvalJobRunner(client);

            JobOutcome outcome = async ? runner.start(threeVignettes("job-7")).get(10, TimeUnit.SECONDS)
                    : runner.run(threeVignettes("job-7"));

            assertThat(outcome.records()).extracting(ResponseRecord::vignetteId).containsExactly("fr", "de", "it");
            assertThat(outcome.records()).extracting(ResponseRecord::isFailed).containsExactly(false, true, false);
            ResponseRecord failed = outcome.records().get(1);
            assertThat(failed.response()).isEmpty();
            assertThat(failed.latencyMs()).isNotNull().isNotNegative();
            // The status, the API's own message and code, and the endpoint, status first.
            assertThat(failed.error()).startsWith("HTTP 400: This model's maximum context length is 16 tokens.")
                    .contains("code context_length_exceeded").contains(client.endpoint().toString());
            assertThat(outcome.records().get(2).response()).isEqualTo("Rome");
        }
        assertThat(server.prompts()).containsExactly("Capital of France?", "Capital of Germany?", "Capital of Italy?",
                "Capital of France?", "Capital of Germany?", "Capital of Italy?");
    }

    @Test
    void aFailedAnswerNeverCarriesTheApiKey() throws Exception {
        try (HttpModelClient keyed = HttpModelClient.builder(server.baseUrl(), "gpt-test").apiKey("sk-secret-123")
                .requestTimeout(Duration.ofSeconds(5)).build()) {
            server.enqueue(Reply.openAiError(400, "Incorrect request for key sk-secret-123", "invalid_request_error",
                    null));

            JobOutcome outcome = new EvalJobRunner(keyed).run(TestJobs.job("j-k", "a"));

            assertThat(outcome.records().get(0).error()).contains("HTTP 400").doesNotContain("sk-secret-123");
        }
    }

    @Test
    void aRetryableFailureInTheMiddleFailsTheJobRetryablyNamingJobAndVignette() {
        server.enqueue(Reply.ok("Paris")).otherwise(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"));

        Throwable thrown = catchThrowable(() -> new EvalJobRunner(client).run(threeVignettes("job-8")));

        assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                .hasMessageContaining("job job-8")
                .hasMessageContaining("vignette 'de'")
                .hasMessageContaining("HTTP 503")
                .hasCauseExactlyInstanceOf(WorkerException.class);
        assertThat(((WorkerException) thrown).isRetryable()).isTrue();
        assertThat(((WorkerException) thrown).scope()).isEqualTo(FailureScope.TRANSIENT);
        // One call for "fr", two attempts for "de", none for "it".
        assertThat(server.prompts()).containsExactly("Capital of France?", "Capital of Germany?",
                "Capital of Germany?");
    }

    @Test
    void aWorkerFaultStaysTheWorkersFaultNamingJobVignetteAndWhatToCheck() {
        server.enqueue(Reply.ok("Paris")).otherwise(Reply.status(404, "{\"object\":\"error\",\"message\":"
                + "\"The model `gpt-test` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}"));

        Throwable thrown = catchThrowable(() -> new EvalJobRunner(client).run(threeVignettes("job-9")));

        assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                .hasMessageStartingWith("the model API at " + server.baseUrl() + " answered HTTP 404 for model"
                        + " 'gpt-test'")
                .hasMessageContaining("check --model-api and --model")
                .hasMessageEndingWith("(this worker's fault, met at job job-9: vignette 'de' (2 of 3))")
                .hasCauseInstanceOf(WorkerFaultException.class);
        assertThat(((WorkerFaultException) thrown).scope()).isEqualTo(FailureScope.WORKER);
        // Not retried by the client: one call for "fr", one for "de", none for "it".
        assertThat(server.prompts()).containsExactly("Capital of France?", "Capital of Germany?");
    }

    @Test
    void aJobScopedFailureOfAnyClientIsAFailedAnswer() throws Exception {
        ImmediateModel refusing = request -> {
            throw new JobFailedException("the prompt is too long");
        };

        JobOutcome outcome = new EvalJobRunner(refusing).run(TestJobs.job("j-r", "a", "b"));
        JobOutcome started = new EvalJobRunner(refusing).start(TestJobs.job("j-r", "a", "b")).get(10, TimeUnit.SECONDS);

        for (JobOutcome o : List.of(outcome, started)) {
            assertThat(o.records()).extracting(ResponseRecord::error)
                    .containsExactly("the prompt is too long", "the prompt is too long");
        }
    }

    @Test
    void keepsTheScopeOfWhateverTheClientThrows() {
        for (ControlException failure : List.of(new WorkerFaultException("its key was refused"),
                new WorkerException("the server was busy"))) {
            ImmediateModel stub = request -> {
                throw failure;
            };

            Throwable thrown = catchThrowable(() -> new EvalJobRunner(stub).run(TestJobs.job("j-s", "a")));

            assertThat(thrown).isInstanceOf(ControlException.class).hasCause(failure)
                    .hasMessageContaining("job j-s").hasMessageContaining(failure.getMessage());
            assertThat(thrown.getClass()).isEqualTo(failure.getClass());
            assertThat(((ControlException) thrown).scope()).isEqualTo(failure.scope());
            assertThat(((ControlException) thrown).isRetryable()).isEqualTo(failure.isRetryable());
        }
    }

    @Test
    void copiesEveryFieldOfTheModelsAnswer() throws Exception {
        ImmediateModel stub = request -> new ModelResponse("re: " + request.prompt(), "stop", "m1", null, 42);

        JobOutcome outcome = new EvalJobRunner(stub).run(TestJobs.job("j", "a", "b"));

        assertThat(outcome.records()).containsExactly(
                new ResponseRecord("v0", "re: a", "m1", "stop", 42L, null),
                new ResponseRecord("v1", "re: b", "m1", "stop", 42L, null));
    }

    @Test
    void anUnexpectedExceptionFailsTheJobRetryably() {
        IllegalStateException bug = new IllegalStateException("boom");
        ImmediateModel stub = request -> {
            throw bug;
        };

        assertThatThrownBy(() -> new EvalJobRunner(stub).run(TestJobs.job("j-9", "a")))
                .isExactlyInstanceOf(WorkerException.class)
                .hasMessageContaining("job j-9").hasMessageContaining("vignette 'v0'").hasMessageContaining("boom")
                .hasCause(bug);
        assertThatThrownBy(() -> new EvalJobRunner((ImmediateModel) request -> null).run(TestJobs.job("j-10", "a")))
                .isInstanceOf(WorkerException.class).hasMessageContaining("job j-10");
    }

    @Test
    void anInterruptStopsTheJob() {
        AtomicInteger calls = new AtomicInteger();
        ImmediateModel interrupted = request -> {
            calls.incrementAndGet();
            throw new InterruptedException("shutting down");
        };
        assertThatThrownBy(() -> new EvalJobRunner(interrupted).run(TestJobs.job("j", "a", "b")))
                .isInstanceOf(InterruptedException.class);
        assertThat(calls).hasValue(1);

        List<String> seen = new ArrayList<>();
        ImmediateModel recording = request -> {
            seen.add(request.prompt());
            return new ModelResponse("x", null, null, null, 0);
        };
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> new EvalJobRunner(recording).run(TestJobs.job("j", "a", "b")))
                    .isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
        assertThat(seen).isEmpty();
    }

    @Test
    void startAnswersEachVignetteInSpecOrderLikeRun() throws Exception {
        server.enqueue(Reply.completion("gpt-test-0613", "Paris", "stop", 20, 1),
                Reply.completion("gpt-test-0613", "Berlin", "stop", 21, 2),
                Reply.completion("gpt-test-0613", null, "length", 22, 16));
        Job job = threeVignettes("job-async");

        JobOutcome outcome = new EvalJobRunner(client).start(job).toCompletableFuture().get(10, TimeUnit.SECONDS);

        outcome.requireAnswers(job);
        assertThat(outcome.records()).extracting(ResponseRecord::vignetteId).containsExactly("fr", "de", "it");
        assertThat(outcome.records()).extracting(ResponseRecord::response).containsExactly("Paris", "Berlin", "");
        assertThat(outcome.records()).extracting(ResponseRecord::usage)
                .containsExactly(new Usage(20, 1), new Usage(21, 2), new Usage(22, 16));
        assertThat(server.prompts())
                .containsExactly("Capital of France?", "Capital of Germany?", "Capital of Italy?");
        // One after another: each vignette was sent once the one before had answered.
        List<FakeOpenAiServer.Recorded> requests = server.requests();
        assertThat(requests.get(0).receivedNanos()).isLessThan(requests.get(1).receivedNanos());
        assertThat(requests.get(1).receivedNanos()).isLessThan(requests.get(2).receivedNanos());
    }

    @Test
    void startFailsAsRunThrowsForEachScope() {
        // Each failure, and the attempts the client makes at it (two when it retries).
        Map<Reply, Integer> failures = new LinkedHashMap<>();
        failures.put(Reply.status(404, "{\"object\":\"error\",\"message\":\"The model `gpt-test` does not"
                + " exist.\"}"), 1);
        failures.put(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"), 2);
        for (Map.Entry<Reply, Integer> f : failures.entrySet()) {
            Reply[] script = new Reply[1 + f.getValue()];
            script[0] = Reply.ok("Paris");
            Arrays.fill(script, 1, script.length, f.getKey());
            // The same script for run and for start.
            server.enqueue(script);
            Throwable blocking = catchThrowable(() -> new EvalJobRunner(client).run(threeVignettes("job-s")));
            server.enqueue(script);
            Throwable async = catchThrowable(() -> new EvalJobRunner(client).start(threeVignettes("job-s"))
                    .toCompletableFuture().get(10, TimeUnit.SECONDS));

            assertThat(async).isInstanceOf(ExecutionException.class);
            Throwable cause = async.getCause();
            assertThat(cause).isExactlyInstanceOf(blocking.getClass())
                    .hasMessageContaining("job job-s").hasMessageContaining("vignette 'de' (2 of 3)");
            // The same message, but for the time the retries took.
            assertThat(withoutTimes(cause.getMessage())).isEqualTo(withoutTimes(blocking.getMessage()));
            assertThat(cause.getCause()).isExactlyInstanceOf(blocking.getCause().getClass());
            assertThat(((ControlException) cause).scope()).isEqualTo(((ControlException) blocking).scope());
        }
    }

    @Test
    void aJobThatFailsCarriesWhatItsAnsweredCallsSpentWhetherRunOrStarted() {
        // "fr" and "de" answered with usage, then "it" fails: its two attempts at 503, or a 404.
        Map<Reply, Integer> failures = new LinkedHashMap<>();
        failures.put(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"), 2);
        failures.put(Reply.status(404, "{\"object\":\"error\",\"message\":\"no such model\"}"), 1);
        for (Map.Entry<Reply, Integer> f : failures.entrySet()) {
            Reply failure = f.getKey();
            Reply[] script = new Reply[2 + f.getValue()];
            script[0] = Reply.completion("gpt-test", "Paris", "stop", 20, 1);
            script[1] = Reply.completion("gpt-test", "Berlin", "stop", 21, 2);
            Arrays.fill(script, 2, script.length, failure);
            server.enqueue(script);
            Throwable blocking = catchThrowable(() -> new EvalJobRunner(client).run(threeVignettes("job-u")));
            server.enqueue(script);
            Throwable async = catchThrowable(() -> new EvalJobRunner(client).start(threeVignettes("job-u"))
                    .toCompletableFuture().get(10, TimeUnit.SECONDS));

            assertThat(blocking).isInstanceOf(ControlException.class);
            assertThat(((ControlException) blocking).spent()).as("run, after %s", failure).isEqualTo(new Usage(41, 3));
            assertThat(async).isInstanceOf(ExecutionException.class);
            assertThat(((ControlException) async.getCause()).spent()).as("start, after %s", failure)
                    .isEqualTo(new Usage(41, 3));
        }
    }

    private static String withoutTimes(String message) {
        return message.replaceAll(" in \\d+(\\.\\d+)? m?s,", " in (time),");
    }

    @Test
    void startTranslatesWhatAStubThrowsLikeRun() throws Exception {
        IllegalStateException bug = new IllegalStateException("boom");
        ImmediateModel throwing = request -> {
            throw bug;
        };
        Throwable failed = catchThrowable(() -> new EvalJobRunner(throwing).start(TestJobs.job("j-9", "a"))
                .toCompletableFuture().join());
        assertThat(failed).isInstanceOf(CompletionException.class).cause()
                .isExactlyInstanceOf(WorkerException.class)
                .hasMessageContaining("job j-9").hasMessageContaining("vignette 'v0'").hasMessageContaining("boom")
                .hasCause(bug);

        WorkerFaultException fault = new WorkerFaultException("its key was refused");
        ImmediateModel failing = request -> {
            throw fault;
        };
        Throwable rescoped = catchThrowable(() -> new EvalJobRunner(failing).start(TestJobs.job("j-s", "a"))
                .toCompletableFuture().join());
        assertThat(rescoped.getCause()).isExactlyInstanceOf(WorkerFaultException.class).hasCause(fault)
                .hasMessage("its key was refused (this worker's fault, met at job j-s: vignette 'v0' (1 of 1))");
    }

    @Test
    void startReturnsAtOnceAndACancelAbortsTheVignetteInFlight() throws Exception {
        try (SilentServer silent = new SilentServer();
             HttpModelClient silentClient = HttpModelClient.builder(silent.baseUrl(), "gpt-test")
                     .requestTimeout(Duration.ofSeconds(30)).build()) {
            CompletableFuture<JobOutcome> job = new EvalJobRunner(silentClient).start(threeVignettes("job-c"))
                    .toCompletableFuture();
            assertThat(job).isNotDone();
            await().atMost(Duration.ofSeconds(5)).until(() -> silent.connections() == 1);
            // Cancel once the request is out: a call cancelled before it is sent may well keep its
            // fresh connection for the next call, and that would be no fault.
            await().atMost(Duration.ofSeconds(5)).until(() -> silent.requestArrived(0));

            assertThat(job.cancel(true)).isTrue();

            assertThat(job).isCancelled();
            // The call of vignette 'fr' is aborted: its connection closed, nothing left to time out.
            await().atMost(Duration.ofSeconds(5)).until(() -> silent.clientHungUp(0));
            assertThat(silentClient.callsInFlight()).isZero();
            assertThat(silentClient.pendingTimers()).isZero();
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                    .until(() -> silent.connections() == 1);
        }
    }

    @Test
    void startChainsThousandsOfVignettesAnsweredAtOnceWithoutDeepStacks() throws Exception {
        String[] prompts = new String[20_000];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = "p" + i;
        }
        ImmediateModel immediate = request -> new ModelResponse("re: " + request.prompt(), "stop", "m", null, 0);

        JobOutcome outcome = new EvalJobRunner(immediate).start(TestJobs.job("j-long", prompts)).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);

        assertThat(outcome.records()).hasSize(prompts.length);
        assertThat(outcome.records().get(19_999).response()).isEqualTo("re: p19999");
    }

    @Test
    void runsInALocalWorker() throws Exception {
        server.otherwise(Reply.ok("answer"));
        try (LocalWorker worker = new LocalWorker("w", 2, new EvalJobRunner(client))) {
            Job job = threeVignettes("job-local");
            JobOutcome outcome = worker.dispatch(job).get(10, TimeUnit.SECONDS);
            assertThat(outcome.records()).hasSize(3).extracting(ResponseRecord::response).containsOnly("answer");
        }
    }

    /**
     * A model client written as a lambda that answers at once: {@code completeAsync} runs
     * {@code complete} on the caller's thread and returns a future already done (fine for a stub
     * that never waits; a real client must not block there).
     */
    @FunctionalInterface
    interface ImmediateModel extends ModelClient {
        @Override
        default CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
            try {
                return CompletableFuture.completedFuture(complete(request));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                CompletableFuture<ModelResponse> cancelled = new CompletableFuture<>();
                cancelled.cancel(false);
                return cancelled;
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
    }
}
