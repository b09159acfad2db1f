package dev.panoptes.eval;

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
import dev.panoptes.eval.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

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
    void aPermanentFailureInTheMiddleFailsTheJobNonRetryablyNamingJobAndVignette() {
        server.enqueue(Reply.ok("Paris"), Reply.openAiError(400, "This model's maximum context length is 16 tokens.",
                "invalid_request_error", "context_length_exceeded"));

        Throwable thrown = catchThrowable(() -> new EvalJobRunner(client).run(threeVignettes("job-7")));

        assertThat(thrown).isInstanceOf(JobFailedException.class)
                .hasMessageContaining("job job-7")
                .hasMessageContaining("vignette 'de'")
                .hasMessageContaining("HTTP 400")
                .hasMessageContaining("maximum context length")
                .hasCauseInstanceOf(JobFailedException.class);
        assertThat(((JobFailedException) thrown).isRetryable()).isFalse();
        assertThat(server.prompts()).containsExactly("Capital of France?", "Capital of Germany?");
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
    void keepsTheScopeOfWhateverTheClientThrows() {
        for (ControlException failure : List.of(new WorkerFaultException("its key was refused"),
                new JobFailedException("the prompt is too long"), new WorkerException("the server was busy"))) {
            ModelClient stub = request -> {
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
        ModelClient stub = request -> new ModelResponse("re: " + request.prompt(), "stop", "m1", null, 42);

        JobOutcome outcome = new EvalJobRunner(stub).run(TestJobs.job("j", "a", "b"));

        assertThat(outcome.records()).containsExactly(
                new ResponseRecord("v0", "re: a", "m1", "stop", 42L, null),
                new ResponseRecord("v1", "re: b", "m1", "stop", 42L, null));
    }

    @Test
    void anUnexpectedExceptionFailsTheJobRetryably() {
        IllegalStateException bug = new IllegalStateException("boom");
        ModelClient stub = request -> {
            throw bug;
        };

        assertThatThrownBy(() -> new EvalJobRunner(stub).run(TestJobs.job("j-9", "a")))
                .isExactlyInstanceOf(WorkerException.class)
                .hasMessageContaining("job j-9").hasMessageContaining("vignette 'v0'").hasMessageContaining("boom")
                .hasCause(bug);
        assertThatThrownBy(() -> new EvalJobRunner(request -> null).run(TestJobs.job("j-10", "a")))
                .isInstanceOf(WorkerException.class).hasMessageContaining("job j-10");
    }

    @Test
    void anInterruptStopsTheJob() {
        AtomicInteger calls = new AtomicInteger();
        ModelClient interrupted = request -> {
            calls.incrementAndGet();
            throw new InterruptedException("shutting down");
        };
        assertThatThrownBy(() -> new EvalJobRunner(interrupted).run(TestJobs.job("j", "a", "b")))
                .isInstanceOf(InterruptedException.class);
        assertThat(calls).hasValue(1);

        List<String> seen = new ArrayList<>();
        ModelClient recording = request -> {
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
    void runsInALocalWorker() throws Exception {
        server.otherwise(Reply.ok("answer"));
        try (LocalWorker worker = new LocalWorker("w", 2, new EvalJobRunner(client))) {
            Job job = threeVignettes("job-local");
            JobOutcome outcome = worker.dispatch(job).get(10, TimeUnit.SECONDS);
            assertThat(outcome.records()).hasSize(3).extracting(ResponseRecord::response).containsOnly("answer");
        }
    }
}
