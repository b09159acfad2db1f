package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.http.FakeOpenAiServer.Recorded;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * {@link HttpModelClient}: what it sends and reads, its retries, whose fault a failure is, calls
 * made asynchronously, cancelled or interrupted, closing, and its builder. Its threads and
 * connections are {@link HttpModelClientConnectionsTest}'s.
 */
class HttpModelClientTest extends HttpModelClientFixture {
    @Nested
    class Completion {
        @Test
        void sendsTheRequestFieldByFieldAndParsesTheAnswer() throws Exception {
            server.enqueue(Reply.completion("gpt-4o-2024-08-06", "Paris.", "stop", 21, 3));
            HttpModelClient client = build(fast().apiKey("sk-test-123"));

            ModelResponse r = client.complete(new ModelRequest("Capital of France?",
                    new SpecParams("Be brief.", 0.2, 64, 42L)));

            assertThat(r.text()).isEqualTo("Paris.");
            assertThat(r.finishReason()).isEqualTo("stop");
            assertThat(r.model()).isEqualTo("gpt-4o-2024-08-06");
            assertThat(r.usage()).isEqualTo(new Usage(21, 3));
            assertThat(r.latencyMs()).isNotNegative().isLessThan(5_000);

            Recorded req = server.onlyRequest();
            assertThat(req.method()).isEqualTo("POST");
            assertThat(req.path()).isEqualTo("/v1/chat/completions");
            assertThat(req.header("Authorization")).isEqualTo("Bearer sk-test-123");
            assertThat(req.headers().get("Content-Type")).containsExactly("application/json");
            assertThat(req.headers().get("Content-Length")).containsExactly(Integer.toString(
                    req.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
            JsonNode body = req.json();
            assertThat(body.fieldNames()).toIterable()
                    .containsExactlyInAnyOrder("model", "messages", "temperature", "max_tokens", "seed", "stream");
            assertThat(body.get("model").asText()).isEqualTo(MODEL);
            JsonNode messages = body.get("messages");
            assertThat(messages).hasSize(2);
            assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
            assertThat(messages.get(0).get("content").asText()).isEqualTo("Be brief.");
            assertThat(messages.get(1).get("role").asText()).isEqualTo("user");
            assertThat(messages.get(1).get("content").asText()).isEqualTo("Capital of France?");
            assertThat(body.get("temperature").isNumber()).isTrue();
            assertThat(body.get("temperature").asDouble()).isEqualTo(0.2);
            assertThat(body.get("max_tokens").isInt()).isTrue();
            assertThat(body.get("max_tokens").asInt()).isEqualTo(64);
            assertThat(body.get("seed").asLong()).isEqualTo(42L);
            assertThat(body.get("stream").isBoolean()).isTrue();
            assertThat(body.get("stream").asBoolean()).isFalse();
        }

        @Test
        void withoutSystemParamsOrKeySendsOnlyTheUserMessageAndNoAuthorization() throws Exception {
            server.enqueue(Reply.ok("hello"));
            HttpModelClient client = build(fast());

            assertThat(client.complete(prompt("Say hello")).text()).isEqualTo("hello");

            Recorded req = server.onlyRequest();
            assertThat(req.header("Authorization")).isNull();
            JsonNode body = req.json();
            assertThat(body.fieldNames()).toIterable().containsExactlyInAnyOrder("model", "messages", "stream");
            assertThat(body.get("messages")).hasSize(1);
            assertThat(body.get("messages").get(0).get("role").asText()).isEqualTo("user");
            assertThat(body.get("messages").get(0).get("content").asText()).isEqualTo("Say hello");
        }

        @Test
        void aRequestThatNamesItsModelAndBringsAChatSendsThemAsGiven() throws Exception {
            server.enqueue(Reply.ok("4"));
            HttpModelClient client = build(fast());
            ModelRequest request = new ModelRequest(List.of(ChatMessage.user("2+2?"), ChatMessage.assistant("4"),
                    ChatMessage.user("3+1?")), new SpecParams(null, null, null, null, "qwen2.5-7b"));

            assertThat(client.complete(request).text()).isEqualTo("4");

            JsonNode body = server.onlyRequest().json();
            assertThat(body.get("model").asText()).isEqualTo("qwen2.5-7b");
            assertThat(body.get("messages")).hasSize(3);
            assertThat(body.get("messages").get(1).get("role").asText()).isEqualTo("assistant");
            assertThat(body.get("messages").get(2).get("content").asText()).isEqualTo("3+1?");
        }

        @Test
        void aClientWithoutADefaultModelFailsARequestNamingNoneAsTheWorkersFaultWithoutCallingTheApi() {
            HttpModelClient client = build(HttpModelClient.builder(server.baseUrl(), null));

            assertThatThrownBy(() -> client.completeAsync(prompt("hi")).join())
                    .hasCauseInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("the job names no model and this worker has no default one");
            assertThat(server.requests()).isEmpty();
        }

        @Test
        void aBlankKeyMeansNoKeyAndAKeyIsTrimmed() throws Exception {
            server.enqueue(Reply.ok("a"), Reply.ok("b"));
            build(fast().apiKey("   ")).complete(prompt("one"));
            build(fast().apiKey("  sk-from-a-file\n")).complete(prompt("two"));

            assertThat(server.requests().get(0).header("Authorization")).isNull();
            assertThat(server.requests().get(1).header("Authorization")).isEqualTo("Bearer sk-from-a-file");
        }

        @Test
        void theBaseUrlMayEndWithASlash() throws Exception {
            server.enqueue(Reply.ok("ok"));
            HttpModelClient client = build(fast(URI.create(server.baseUrl() + "/")));

            assertThat(client.endpoint()).isEqualTo(URI.create(server.baseUrl() + "/chat/completions"));
            client.complete(prompt("p"));
            assertThat(server.onlyRequest().path()).isEqualTo("/v1/chat/completions");
        }

        @Test
        void reusesTheConnectionAcrossCalls() throws Exception {
            server.otherwise(Reply.ok("again"));
            HttpModelClient client = build(fast());
            for (int i = 0; i < 3; i++) {
                client.complete(prompt("p" + i));
            }
            assertThat(server.requests()).extracting(Recorded::clientPort).containsOnly(
                    server.requests().get(0).clientPort());
        }

        @Test
        void reusesOneClientFromManyThreads() throws Exception {
            server.otherwise(Reply.ok("same"));
            HttpModelClient client = build(fast());
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<ModelResponse>> futures = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    String p = "prompt " + i;
                    futures.add(pool.submit(() -> client.complete(prompt(p))));
                }
                for (Future<ModelResponse> f : futures) {
                    assertThat(f.get(10, TimeUnit.SECONDS).text()).isEqualTo("same");
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(server.prompts()).hasSize(16).doesNotHaveDuplicates();
        }

        @Test
        void nullContentIsEmptyText() throws Exception {
            server.enqueue(Reply.completion("m", null, "length", 7, 0));
            ModelResponse r = build(fast()).complete(prompt("p"));

            assertThat(r.text()).isEmpty();
            assertThat(r.finishReason()).isEqualTo("length");
            assertThat(r.usage()).isEqualTo(new Usage(7, 0));
        }

        @Test
        void missingOrNullUsageIsNullUsage() throws Exception {
            server.enqueue(Reply.completion("m", "no usage", "stop", null, null),
                    Reply.status(200, "{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\","
                            + "\"content\":\"null usage\"},\"finish_reason\":null}],\"usage\":null}"));
            HttpModelClient client = build(fast());

            ModelResponse first = client.complete(prompt("p"));
            assertThat(first.text()).isEqualTo("no usage");
            assertThat(first.usage()).isNull();

            ModelResponse second = client.complete(prompt("p"));
            assertThat(second.text()).isEqualTo("null usage");
            assertThat(second.usage()).isNull();
            assertThat(second.finishReason()).isNull();
        }

        @Test
        void joinsContentGivenAsParts() throws Exception {
            server.enqueue(Reply.status(200, "{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\","
                    + "\"content\":[{\"type\":\"text\",\"text\":\"Hello, \"},{\"type\":\"text\",\"text\":\"world\"}]},"
                    + "\"finish_reason\":\"stop\"}]}"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("Hello, world");
        }

        @Test
        void toleratesAMissingModelAndUnknownFields() throws Exception {
            server.enqueue(Reply.status(200, "{\"x_vendor\":{\"a\":1},\"choices\":[{\"message\":{\"content\":\"hi\","
                    + "\"reasoning_content\":\"thinking\",\"tool_calls\":[]},\"stop_reason\":null,"
                    + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,"
                    + "\"total_tokens\":4,\"completion_tokens_details\":{\"reasoning_tokens\":0}}}"));
            ModelResponse r = build(fast()).complete(prompt("p"));

            assertThat(r.text()).isEqualTo("hi");
            assertThat(r.model()).isNull();
            assertThat(r.usage()).isEqualTo(new Usage(3, 1));
        }
    }

    @Nested
    class Retried {
        @Test
        void a429WithRetryAfterSecondsIsRetriedAfterWaitingAboutAsTold() throws Exception {
            server.enqueue(Reply.openAiError(429, "Rate limit reached for gpt-test on requests per min (RPM)",
                            "requests", "rate_limit_exceeded").header("Retry-After", "1"),
                    Reply.ok("after the wait"));
            HttpModelClient client = build(fast());

            ModelResponse r = client.complete(prompt("p"));

            assertThat(r.text()).isEqualTo("after the wait");
            assertThat(server.requestCount()).isEqualTo(2);
            List<Recorded> reqs = server.requests();
            assertThat(millisBetween(reqs.get(0), reqs.get(1))).isBetween(950L, 3_000L);
            assertThat(r.latencyMs()).isGreaterThanOrEqualTo(950L);
        }

        @Test
        void retryAfterMsIsHonouredAndPreferredToRetryAfter() throws Exception {
            server.enqueue(Reply.openAiError(429, "Rate limit reached", "tokens", "rate_limit_exceeded")
                            .header("retry-after-ms", "300").header("Retry-After", "10"),
                    Reply.ok("after 300 ms"));

            ModelResponse r = build(fast()).complete(prompt("p"));

            assertThat(r.text()).isEqualTo("after 300 ms");
            List<Recorded> reqs = server.requests();
            assertThat(reqs).hasSize(2);
            assertThat(millisBetween(reqs.get(0), reqs.get(1))).isBetween(280L, 2_500L);
        }

        @Test
        void retryAfterAsAnHttpDateIsHonoured() throws Exception {
            ZonedDateTime at = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(2);
            server.enqueue(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}")
                            .header("Retry-After", DateTimeFormatter.RFC_1123_DATE_TIME.format(at)),
                    Reply.ok("after the date"));

            ModelResponse r = build(fast()).complete(prompt("p"));

            assertThat(r.text()).isEqualTo("after the date");
            List<Recorded> reqs = server.requests();
            // The date has whole seconds, so the wait is between 1 and 2 s from the first answer.
            assertThat(millisBetween(reqs.get(0), reqs.get(1))).isBetween(700L, 4_000L);
        }

        @Test
        void aLongRetryAfterIsCutToMaxRetryAfter() throws Exception {
            server.enqueue(Reply.status(429, "{}").header("Retry-After", "30"), Reply.ok("soon"));

            ModelResponse r = build(fast().maxRetryAfter(Duration.ofMillis(200))).complete(prompt("p"));

            assertThat(r.text()).isEqualTo("soon");
            List<Recorded> reqs = server.requests();
            assertThat(millisBetween(reqs.get(0), reqs.get(1))).isBetween(180L, 2_500L);
        }

        @Test
        void a429RateLimitWithoutRetryAfterIsRetriedWithBackoff() throws Exception {
            Reply limited = Reply.openAiError(429, "Rate limit reached for requests", "requests",
                    "rate_limit_exceeded");
            server.enqueue(limited, Reply.openAiError(429, "Rate limit reached for requests", "requests",
                    "rate_limit_exceeded"), Reply.ok("finally"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("finally");
            assertThat(server.requestCount()).isEqualTo(3);
        }

        @Test
        void a503TwiceThenSuccess() throws Exception {
            String loading = "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}";
            server.enqueue(Reply.status(503, loading), Reply.status(503, loading), Reply.ok("loaded"));

            ModelResponse r = build(fast()).complete(prompt("p"));

            assertThat(r.text()).isEqualTo("loaded");
            assertThat(server.requestCount()).isEqualTo(3);
            assertThat(server.prompts()).containsOnly("p");
        }

        @Test
        void statuses408And409AreRetried() throws Exception {
            server.enqueue(Reply.status(408, ""), Reply.status(409, "{\"error\":{\"message\":\"lock\"}}"),
                    Reply.ok("third time"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("third time");
            assertThat(server.requestCount()).isEqualTo(3);
        }

        @Test
        void a500ForeverFailsRetryablyAfterTheConfiguredAttemptsWithinTheBudget() {
            server.otherwise(Reply.openAiError(500, "The server had an error while processing your request.",
                    "server_error", null));
            HttpModelClient client = build(fast().maxAttempts(3).retryBudget(Duration.ofSeconds(10)));

            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining(client.endpoint().toString())
                    .hasMessageContaining("HTTP 500")
                    .hasMessageContaining("The server had an error")
                    .hasMessageContaining("3 attempts")
                    .hasMessageContaining("retries exhausted");
            assertThat(((WorkerException) thrown).isRetryable()).isTrue();
            assertThat(server.requestCount()).isEqualTo(3);
            assertThat(elapsedMs).isLessThan(10_000L);
        }

        @Test
        void theWallClockBudgetStopsRetriesEvenWhenAttemptsRemain() {
            server.otherwise(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}")
                    .header("retry-after-ms", "200"));
            HttpModelClient client = build(fast().maxAttempts(50).retryBudget(Duration.ofMillis(700)));

            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("retry budget of 700 ms exhausted")
                    .hasMessageContaining("HTTP 503")
                    .hasMessageContaining("overloaded");
            // Attempts at about 0, 200, 400 and 600 ms; the next would start past 700 ms.
            assertThat(server.requestCount()).isBetween(2, 4);
            assertThat(elapsedMs).isBetween(350L, 2_000L);
        }

        @Test
        void anAttemptTheRetryBudgetCutShortStillNamesTheFailureThatCausedTheRetries() {
            // The retry starts with ~400 ms of the budget left, less than the request timeout:
            // its time-out is the budget running out, and the 503 is why the call failed.
            server.enqueue(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}")
                    .header("retry-after-ms", "100"), Reply.ok("too late").hang());
            HttpModelClient client = build(fast().maxAttempts(50).retryBudget(Duration.ofMillis(500)));

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("retry budget of 500 ms exhausted")
                    .hasMessageContaining("HTTP 503")
                    .hasMessageContaining("overloaded");
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void aResponseCutShortIsRetried() throws Exception {
            server.enqueue(Reply.ok("this body is cut off on the wire").cutAfter(30), Reply.ok("whole"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("whole");
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void aConnectionDroppedMidBodyForeverFailsRetryablyAsAnIoError() {
            server.otherwise(Reply.ok("this body is cut off on the wire").cutAfter(30));
            HttpModelClient client = build(fast().maxAttempts(2));

            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("I/O error talking to 127.0.0.1:" + server.baseUrl().getPort())
                    .hasMessageContaining("2 attempts")
                    .hasCauseInstanceOf(java.io.IOException.class);
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void aTruncatedJsonBodyIsRetried() throws Exception {
            String json = FakeOpenAiServer.completionJson("m", "text", "stop", 1, 1);
            server.enqueue(Reply.status(200, json.substring(0, json.length() / 2)), Reply.ok("whole"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("whole");
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void aMalformedBodyForeverFailsRetryablyNamingTheProblem() {
            server.otherwise(Reply.status(200, "{\"id\":\"chatcmpl-1\",\"choi"));
            HttpModelClient client = build(fast().maxAttempts(2));

            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("HTTP 200 but malformed or truncated JSON")
                    .hasMessageContaining("2 attempts");
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void anErrorInA200WithARetryableCodeIsRetried() throws Exception {
            server.enqueue(Reply.status(200, "{\"error\":{\"code\":503,\"message\":\"Loading model\"}}"),
                    Reply.ok("loaded"));

            assertThat(build(fast()).complete(prompt("p")).text()).isEqualTo("loaded");
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void aServerThatNeverAnswersTimesOutPerTheRequestTimeout() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                HttpModelClient client = build(fast(silent.baseUrl())
                        .requestTimeout(Duration.ofMillis(300)).maxAttempts(2));

                long start = System.nanoTime();
                Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                        .hasMessageContaining("timed out after 300 ms")
                        .hasMessageContaining("2 attempts")
                        .hasMessageContaining(silent.baseUrl().toString());
                assertThat(elapsedMs).isBetween(580L, 5_000L);
                assertThat(silent.connections()).isGreaterThanOrEqualTo(1);
            }
        }

        @Test
        void theKeyNeverAppearsInARetryableFailureOrInToString() {
            String key = "sk-live-ECHOED-BACK";
            server.otherwise(Reply.status(502, "<html>bad gateway for Bearer " + key + "</html>")
                    .header("Content-Type", "text/html"));
            HttpModelClient client = build(fast().apiKey(key).maxAttempts(2));

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("HTTP 502")
                    .hasMessageContaining("bad gateway")
                    .hasMessageNotContaining(key);
            assertScope(thrown, FailureScope.TRANSIENT);
            assertThat(client.toString()).contains("apiKey=set").doesNotContain(key);
        }
    }

    /** The job's own faults: the same request would fail on any worker. */
    @Nested
    class TheJobsFault {
        @Test
        void a400FailsPermanentlyWithTheStatusAndServerMessageAfterOneRequest() {
            server.otherwise(Reply.openAiError(400, "Invalid value for 'temperature': must be at most 2.",
                    "invalid_request_error", "invalid_value"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 400")
                    .hasMessageContaining("Invalid value for 'temperature': must be at most 2.")
                    .hasMessageContaining("invalid_request_error")
                    .hasMessageContaining(client.endpoint().toString());
            assertScope(thrown, FailureScope.JOB);
            assertThat(((JobFailedException) thrown).isRetryable()).isFalse();
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void aContextLengthErrorA413AndA422AreTheJobsFaultAndNotRetried() {
            server.enqueue(Reply.openAiError(400, "This model's maximum context length is 8192 tokens.",
                            "invalid_request_error", "context_length_exceeded"),
                    Reply.status(413, "{\"error\":{\"message\":\"request entity too large\"}}"),
                    Reply.status(422, "{\"detail\":[{\"loc\":[\"body\",\"messages\"],"
                            + "\"msg\":\"field required\",\"type\":\"value_error.missing\"}]}"));
            HttpModelClient client = build(fast());

            Throwable contextLength = catchThrowable(() -> client.complete(prompt("p")));
            Throwable tooLarge = catchThrowable(() -> client.complete(prompt("p")));
            Throwable unprocessable = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(contextLength).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 400").hasMessageContaining("maximum context length");
            assertThat(tooLarge).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 413").hasMessageContaining("too large");
            assertThat(unprocessable).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 422").hasMessageContaining("field required");
            for (Throwable t : List.of(contextLength, tooLarge, unprocessable)) {
                assertScope(t, FailureScope.JOB);
            }
            assertThat(server.requestCount()).isEqualTo(3);
        }

        @Test
        void anyOther4xxIsTheJobsFault() {
            server.otherwise(Reply.status(418, "{\"error\":{\"message\":\"I'm a teapot\"}}"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(JobFailedException.class).hasMessageContaining("HTTP 418");
            assertScope(thrown, FailureScope.JOB);
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void aNonJsonErrorBodyIsQuotedAsAShortExcerpt() {
            String page = "<html><head><title>400 Bad Request</title></head><body>" + "x".repeat(5_000)
                    + "THE-END</body></html>";
            server.otherwise(Reply.status(400, page).header("Content-Type", "text/html"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 400")
                    .hasMessageContaining("400 Bad Request")
                    .hasMessageNotContaining("THE-END");
            assertThat(thrown.getMessage().length()).isLessThan(600);
        }

        @Test
        void aSuccessCarryingAnErrorWithoutAStatusOrWithEmptyChoicesIsTheJobsFault() {
            server.enqueue(Reply.status(200, "{\"error\":{\"message\":\"content filtered\"}}"),
                    Reply.status(200, "{\"choices\":[]}"));
            HttpModelClient client = build(fast());

            Throwable filtered = catchThrowable(() -> client.complete(prompt("p")));
            Throwable empty = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(filtered).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("HTTP 200 but the response carries an error instead of 'choices'")
                    .hasMessageContaining("content filtered");
            assertThat(empty).isInstanceOf(JobFailedException.class).hasMessageContaining("'choices' array is empty");
            assertScope(filtered, FailureScope.JOB);
            assertScope(empty, FailureScope.JOB);
            assertThat(server.requestCount()).isEqualTo(2);
        }
    }

    /**
     * The worker's own faults: its URL, key, account, model name or server. Thrown at once as
     * {@link WorkerFaultException}, whose message says what to check.
     */
    @Nested
    class TheWorkersFault {
        @Test
        void a404ForAnUnknownModelInVllmsFlatEnvelopeNamesTheApiTheModelAndWhatToCheck() {
            server.otherwise(Reply.status(404, "{\"object\":\"error\",\"message\":\"The model `gpt-test` does not "
                    + "exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class).hasMessage("the model API at "
                    + server.baseUrl() + " answered HTTP 404 for model 'gpt-test': The model `gpt-test` does not"
                    + " exist. (type NotFoundError, code 404); check --model-api and --model");
            assertScope(thrown, FailureScope.WORKER);
            assertThat(((WorkerFaultException) thrown).isRetryable()).isTrue();
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void a401IsTheWorkersFaultAndTheKeyNeverAppearsInTheMessage() {
            String key = "sk-proj-SECRET0123456789";
            server.otherwise(Reply.openAiError(401, "Incorrect API key provided: " + key
                    + ". You can find your API key at https://platform.openai.com/account/api-keys.",
                    "invalid_request_error", "invalid_api_key"));
            HttpModelClient client = build(fast().apiKey(key));

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                    .hasMessageStartingWith("the model API at " + server.baseUrl() + " answered HTTP 401 for model"
                            + " 'gpt-test': Incorrect API key provided: [REDACTED]")
                    .hasMessageEndingWith("; check the API key (--api-key or OPENAI_API_KEY)")
                    .hasMessageNotContaining(key);
            assertScope(thrown, FailureScope.WORKER);
            assertThat(server.requestCount()).isEqualTo(1);
            assertThat(server.onlyRequest().header("Authorization")).isEqualTo("Bearer " + key);
        }

        @Test
        void a403AndA405AreTheWorkersFault() {
            server.enqueue(Reply.openAiError(403, "Project does not have access to model", "invalid_request_error",
                    "model_not_found"), Reply.status(405, "{\"detail\":\"Method Not Allowed\"}"));
            HttpModelClient client = build(fast());

            Throwable forbidden = catchThrowable(() -> client.complete(prompt("p")));
            Throwable notAllowed = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(forbidden).isInstanceOf(WorkerFaultException.class).hasMessageContaining("HTTP 403")
                    .hasMessageContaining("does not have access")
                    .hasMessageContaining("check --api-key and --model");
            assertThat(notAllowed).isInstanceOf(WorkerFaultException.class).hasMessageContaining("HTTP 405")
                    .hasMessageContaining("Method Not Allowed")
                    .hasMessageContaining("check --model-api: it must be the API's base URL");
            assertScope(forbidden, FailureScope.WORKER);
            assertScope(notAllowed, FailureScope.WORKER);
            assertThat(server.requestCount()).isEqualTo(2);
        }

        @Test
        void a429ForInsufficientQuotaIsTheWorkersAccountAndNotRetried() {
            server.otherwise(Reply.openAiError(429, "You exceeded your current quota, please check your plan and "
                    + "billing details.", "insufficient_quota", "insufficient_quota").header("Retry-After", "1"));
            HttpModelClient client = build(fast());

            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("HTTP 429")
                    .hasMessageContaining("You exceeded your current quota")
                    .hasMessageContaining("insufficient_quota")
                    .hasMessageContaining("out of quota or credit");
            assertScope(thrown, FailureScope.WORKER);
            assertThat(server.requestCount()).isEqualTo(1);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(900L);
        }

        @Test
        void aRedirectIsNotFollowedNorRetried() {
            server.otherwise(Reply.status(301, "").header("Location", "https://elsewhere.invalid/v1/chat/completions"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("HTTP 301")
                    .hasMessageContaining("https://elsewhere.invalid/v1/chat/completions")
                    .hasMessageContaining("check --model-api");
            assertScope(thrown, FailureScope.WORKER);
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void a200WithoutChoicesIsAnotherApiAndNamesWhatIsMissing() {
            server.otherwise(Reply.status(200, "{\"object\":\"list\",\"data\":[]}"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("answered HTTP 200 for model 'gpt-test' but the response has no 'choices'"
                            + " array")
                    .hasMessageContaining("check that --model-api is the base URL of an OpenAI-compatible API");
            assertScope(thrown, FailureScope.WORKER);
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void a200WithoutAMessageOrWithContentOfAnotherShapeIsAnotherApi() {
            server.enqueue(Reply.status(200, "{\"choices\":[{\"index\":0,\"text\":\"a legacy completion\"}]}"),
                    Reply.status(200, "{\"choices\":[{\"message\":{\"content\":42}}]}"),
                    Reply.status(200, "[1,2,3]"));
            HttpModelClient client = build(fast());

            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isInstanceOf(WorkerFaultException.class).hasMessageContaining("'choices[0].message'");
            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("'choices[0].message.content' is neither text nor null");
            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isInstanceOf(WorkerFaultException.class).hasMessageContaining("not a JSON object");
            assertThat(server.requestCount()).isEqualTo(3);
        }

        @Test
        void a200CarryingAnErrorWhoseCodeIs404IsTheWorkersFault() {
            server.otherwise(Reply.status(200, "{\"error\":{\"code\":404,\"message\":\"model not found\"}}"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class).hasMessageContaining("model not found");
            assertThat(server.requestCount()).isEqualTo(1);
        }

        @Test
        void aRefusedConnectionSaysWhereAndAsksWhetherTheServerRuns() throws Exception {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            HttpModelClient client = build(fast(URI.create("http://127.0.0.1:" + port + "/v1")).maxAttempts(3));

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            // Not "failed after 3 attempts": the first refusal is final for this worker.
            assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                    .hasMessage("cannot connect to the model API at 127.0.0.1:" + port
                            + " (Connection refused); is the model server running?")
                    .hasCauseInstanceOf(ConnectException.class);
            assertScope(thrown, FailureScope.WORKER);
        }

        @Test
        void aTlsFailureIsTheWorkersFault() throws Exception {
            // A plain HTTP server answers the TLS ClientHello with text the handshake cannot read.
            try (SilentServer plain = SilentServer.greeting("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")) {
                HttpModelClient client = build(fast(plain.httpsBaseUrl()).maxAttempts(3));

                Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

                assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                        .hasMessageStartingWith("TLS with the model API at 127.0.0.1:" + plain.port() + " failed (")
                        .hasMessageContaining("SSL")
                        .hasMessageEndingWith("check --model-api (http or https?) and the server's certificate");
                assertThat(Retries.inChain(thrown, SSLException.class)).isNotNull();
                assertScope(thrown, FailureScope.WORKER);
                assertThat(plain.connections()).isEqualTo(1);
            }
        }
    }

    /** completeAsync: returns at once, completes on the client's threads, and a cancel aborts. */
    @Nested
    class Async {
        @Test
        void returnsAtOnceAndCompletesWithTheAnswer() throws Exception {
            server.enqueue(Reply.ok("async answer"));
            HttpModelClient client = build(fast());

            CompletableFuture<ModelResponse> call = client.completeAsync(prompt("p"));

            assertThat(call.get(10, TimeUnit.SECONDS).text()).isEqualTo("async answer");
            assertThat(server.prompts()).containsExactly("p");
            await().atMost(Duration.ofSeconds(5)).until(() -> client.callsInFlight() == 0);
        }

        @Test
        void failsWithTheSameExceptionsAsComplete() {
            server.enqueue(Reply.openAiError(400, "Invalid value for 'temperature'", "invalid_request_error",
                    "invalid_value"));
            HttpModelClient client = build(fast());

            Throwable thrown = catchThrowable(() -> client.completeAsync(prompt("p")).get(10, TimeUnit.SECONDS));

            assertThat(thrown).isInstanceOf(ExecutionException.class);
            assertThat(thrown.getCause()).isInstanceOf(JobFailedException.class).hasMessageContaining("HTTP 400")
                    .hasMessageContaining("Invalid value for 'temperature'");
        }

        @Test
        void aCancelAbortsTheCallInFlightAndClosesItsConnection() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                HttpModelClient client = build(fast(silent.baseUrl()).requestTimeout(Duration.ofSeconds(30)));

                CompletableFuture<ModelResponse> call = client.completeAsync(prompt("p"));
                assertThat(call).isNotDone();
                await().atMost(Duration.ofSeconds(5)).until(() -> silent.connections() == 1);
                assertThat(silent.clientHungUp(0)).as("hung up before the cancel").isFalse();

                assertThat(call.cancel(true)).isTrue();

                assertThat(call).isCancelled();
                await().atMost(Duration.ofSeconds(5)).until(() -> silent.clientHungUp(0));
                // Nothing is left to time out or to retry, and no new connection is made.
                assertThat(client.pendingTimers()).isZero();
                assertThat(client.callsInFlight()).isZero();
                await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                        .until(() -> silent.connections() == 1);
            }
        }

        /**
         * Waits, polling every millisecond on this thread, until the client leases no connection
         * and the server holds no request on a connection the client keeps open: the call's
         * connection was closed and left the pool.
         */
        private void awaitConnectionClosedAndReturned(HttpModelClient client, HoldingServer holding, int trial) {
            await("trial " + trial + ": no connection leased, the held request's connection closed")
                    .pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> client.leasedConnections() == 0 && holding.heldAndOpen() == 0);
        }

        @Test
        void aCancelAfterTheRequestWasSentClosesItsNewConnectionEveryTime() throws Exception {
            // On a new connection Apache's cancel aborts nothing whenever the I/O thread connects
            // and sends before the calling thread has registered the connect: a few trials in a
            // hundred, each keeping a connection leased, and the server generating, for the whole
            // request timeout.
            int trials = 200;
            try (HoldingServer holding = new HoldingServer(body -> false)) {
                HttpModelClient client = build(fast(holding.baseUrl()).requestTimeout(Duration.ofSeconds(30)));

                for (int i = 0; i < trials; i++) {
                    int held = i + 1;
                    CompletableFuture<ModelResponse> call = client.completeAsync(prompt("p" + i));
                    await().pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                            .atMost(Duration.ofSeconds(3)).until(() -> holding.requestsHeld() == held);

                    assertThat(call.cancel(true)).isTrue();

                    awaitConnectionClosedAndReturned(client, holding, i);
                    assertThat(client.callsInFlight()).isZero();
                }
                // One connection per call: none was kept for the next one half-read.
                assertThat(holding.connections()).isEqualTo(trials);
                assertThat(client.pendingTimers()).isZero();
            }
        }

        @Test
        void aCancelAfterTheRequestWasSentOnAReusedConnectionClosesIt() throws Exception {
            // On a pooled connection Apache's cancel never aborted the exchange: the lease is
            // immediate, the request is sent within it, and the finished lease is what the
            // cancel then cancels.
            int trials = 50;
            try (HoldingServer holding = new HoldingServer(body -> body.contains("warm-up"))) {
                HttpModelClient client = build(fast(holding.baseUrl()).requestTimeout(Duration.ofSeconds(30)));

                for (int i = 0; i < trials; i++) {
                    int held = i + 1;
                    assertThat(client.complete(prompt("warm-up")).text()).isEqualTo("done");
                    // A new connection for the warm-up: the one aborted before is gone.
                    assertThat(holding.connections()).isEqualTo(held);
                    CompletableFuture<ModelResponse> call = client.completeAsync(prompt("p" + i));
                    await().pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                            .atMost(Duration.ofSeconds(3)).until(() -> holding.requestsHeld() == held);
                    // The held request went out on the warm-up's pooled connection.
                    assertThat(holding.connections()).isEqualTo(held);

                    assertThat(call.cancel(true)).isTrue();

                    awaitConnectionClosedAndReturned(client, holding, i);
                }
            }
        }

        @Test
        void anAttemptThatTimesOutOnAReusedConnectionClosesItAtOnce() throws Exception {
            try (HoldingServer holding = new HoldingServer(body -> body.contains("warm-up"))) {
                // Long enough for the warm-up's answer even on a loaded machine.
                HttpModelClient client = build(fast(holding.baseUrl()).requestTimeout(Duration.ofSeconds(1))
                        .maxAttempts(1));
                client.complete(prompt("warm-up"));

                Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

                assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                        .hasMessageContaining("timed out after 1.0 s");
                assertThat(holding.requestsHeld()).isEqualTo(1);
                // Not only when Apache's own socket timeout fires, 10 s later.
                awaitConnectionClosedAndReturned(client, holding, 0);
                assertThat(holding.connections()).isEqualTo(1);
            }
        }

        @Test
        void aCancelDuringTheWaitBeforeARetryStopsTheRetry() throws Exception {
            server.otherwise(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}").header("retry-after-ms", "800"));
            HttpModelClient client = build(fast());

            CompletableFuture<ModelResponse> call = client.completeAsync(prompt("p"));
            await().atMost(Duration.ofSeconds(5)).until(() -> server.requestCount() == 1);
            // The attempt's timeout is gone; the retry waits on the timer.
            await().atMost(Duration.ofSeconds(5)).until(() -> client.pendingTimers() == 1);

            call.cancel(true);

            assertThat(client.pendingTimers()).isZero();
            await().during(Duration.ofMillis(1_200)).atMost(Duration.ofSeconds(3))
                    .until(() -> server.requestCount() == 1);
            assertThat(call).isCancelled();
        }
    }

    @Nested
    class Interrupts {
        @Test
        void anInterruptDuringARequestPropagatesPromptly() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                HttpModelClient client = build(fast(silent.baseUrl()).requestTimeout(Duration.ofSeconds(30)));
                assertInterruptible(client, silent::connections);
            }
        }

        @Test
        void anInterruptDuringTheWaitBeforeARetryPropagatesPromptly() throws Exception {
            server.otherwise(Reply.status(503, "{}").header("Retry-After", "30"));
            HttpModelClient client = build(fast().retryBudget(Duration.ofMinutes(2)));
            assertInterruptible(client, server::requestCount);
        }

        private void assertInterruptible(HttpModelClient client, java.util.function.IntSupplier started)
                throws Exception {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CompletableFuture<Boolean> flagAfter = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    client.complete(prompt("p"));
                } catch (Throwable t) {
                    thrown.set(t);
                }
                flagAfter.complete(Thread.currentThread().isInterrupted());
            });
            caller.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> started.getAsInt() >= 1);
            // Interrupt only once the caller is parked waiting for the answer or the next attempt.
            await().atMost(Duration.ofSeconds(5)).until(() -> caller.getState() == Thread.State.WAITING
                    || caller.getState() == Thread.State.TIMED_WAITING);
            long start = System.nanoTime();
            caller.interrupt();
            caller.join(5_000);

            assertThat(caller.isAlive()).isFalse();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000L);
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
            assertThat(flagAfter.get()).as("interrupt flag after InterruptedException").isFalse();
        }
    }

    @Nested
    class Lifecycle {
        @Test
        void aClosedClientRefusesCalls() {
            HttpModelClient client = build(fast());
            client.close();
            client.close();

            assertThatThrownBy(() -> client.complete(prompt("p")))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            assertThat(server.requestCount()).isZero();
        }

        @Test
        void toStringShowsTheSettingsButNotTheKey() {
            HttpModelClient withKey = build(HttpModelClient.builder(URI.create("https://api.openai.com/v1"), "gpt-4o")
                    .apiKey("sk-do-not-print"));
            HttpModelClient without = build(HttpModelClient.builder(URI.create("http://localhost:11434/v1/"), "llama3"));

            assertThat(withKey.toString())
                    .contains("https://api.openai.com/v1/chat/completions", "gpt-4o", "apiKey=set",
                            "requestTimeout=PT2M", "maxAttempts=6", "retryBudget=PT5M", "backoffBase=PT0.5S",
                            "backoffCap=PT8S", "maxRetryAfter=PT1M", "maxConnections=256", "ioThreads=1")
                    .doesNotContain("sk-do-not-print");
            assertThat(without.toString()).contains("http://localhost:11434/v1/chat/completions", "apiKey=none");
        }
    }

    @Nested
    class BuilderValidation {
        private final URI ok = URI.create("http://localhost:8000/v1");

        @Test
        void refusesABaseUrlThatIsNotHttpOrHttps() {
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("ftp://host/v1"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("http or https");
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("localhost:8000/v1"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("http or https");
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("/v1"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("http or https");
            assertThatThrownBy(() -> HttpModelClient.builder(null, MODEL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("base URL");
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("http://host/v1?key=1"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("query");
        }

        @Test
        void refusesCredentialsInTheUrlWithoutRepeatingThem() {
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("http://me:hunter2@host/v1"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("user name or password")
                    .hasMessageNotContaining("hunter2");
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("http://host/v1?api-key=hunter2"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'http://host/v1' must not have a query")
                    .hasMessageNotContaining("hunter2");
            assertThatThrownBy(() -> HttpModelClient.builder(URI.create("ftp://host/v1?key=hunter2"), MODEL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("got 'ftp://host/v1'")
                    .hasMessageNotContaining("hunter2");
        }

        @Test
        void refusesABlankModel() {
            assertThatThrownBy(() -> HttpModelClient.builder(ok, " "))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("model must not be blank");
        }

        @Test
        void refusesBadNumbersAndDurations() {
            HttpModelClient.Builder b = HttpModelClient.builder(ok, MODEL);
            assertThatThrownBy(() -> b.maxAttempts(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be at least 1, got 0");
            assertThatThrownBy(() -> b.requestTimeout(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("requestTimeout must be a positive duration");
            assertThatThrownBy(() -> b.connectTimeout(null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectTimeout");
            assertThatThrownBy(() -> b.retryBudget(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryBudget");
            assertThatThrownBy(() -> b.backoffBase(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("backoffBase must not be negative");
            assertThatThrownBy(() -> b.maxRetryAfter(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetryAfter");
            assertThatThrownBy(() -> HttpModelClient.builder(ok, MODEL).backoffBase(Duration.ofSeconds(2))
                    .backoffCap(Duration.ofSeconds(1)).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("backoffCap").hasMessageContaining("backoffBase");
        }

        @Test
        void refusesAKeyThatCannotBeAHeaderWithoutRepeatingIt() {
            assertThatThrownBy(() -> HttpModelClient.builder(ok, MODEL).apiKey("sk-abc\r\nX-Evil: 1"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("apiKey")
                    .hasMessageNotContaining("sk-abc");
        }
    }
}

