package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.eval.http.FakeOpenAiServer.Recorded;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import dev.panoptes.eval.http.ModelApiCheck.Result;
import dev.panoptes.eval.http.ModelApiCheck.Verdict;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModelApiCheckTest {
    private static final String MODEL = "llama-3.1-8b";
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final FakeOpenAiServer server = new FakeOpenAiServer();
    private final List<HttpModelClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() {
        clients.forEach(HttpModelClient::close);
        server.close();
    }

    private HttpModelClient client(URI baseUrl, String model, String key) {
        HttpModelClient c = HttpModelClient.builder(baseUrl, model).apiKey(key).connectTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(c);
        return c;
    }

    private Result check(String model) throws InterruptedException {
        return new ModelApiCheck(client(server.baseUrl(), model, null), TIMEOUT).run();
    }

    private List<String> requestLines() {
        return server.requests().stream().map(r -> r.method() + " " + r.path()).toList();
    }

    @Nested
    class WhenTheServerListsItsModels {
        @Test
        void withoutModelsNamedTheWorkerOffersEveryModelTheApiLists() throws Exception {
            server.on("GET", "/v1/models", Reply.models("mistral-7b", MODEL));

            Result r = new ModelApiCheck(client(server.baseUrl(), MODEL, null), List.of(), TIMEOUT).run();

            assertThat(r.verdict()).isEqualTo(Verdict.OK);
            assertThat(r.models()).containsExactly("mistral-7b", MODEL);
            assertThat(r.message()).endsWith("serves 'mistral-7b', '" + MODEL + "'; offering them all to the coordinator");
        }

        @Test
        void severalModelsNamedMustAllBeListedAndTheMissingOnesAreNamed() throws Exception {
            server.on("GET", "/v1/models", Reply.models("mistral-7b", MODEL));

            Result r = new ModelApiCheck(client(server.baseUrl(), MODEL, null), List.of(MODEL, "qwen-7b", "phi-3"),
                    TIMEOUT).run();

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(r.models()).isEmpty();
            assertThat(r.message()).contains("does not serve models 'qwen-7b', 'phi-3'; it serves mistral-7b, "
                    + MODEL + "; check --model");
        }

        @Test
        void aListedModelIsOkAfterOneRequestThatCarriesTheKey() throws Exception {
            server.on("GET", "/v1/models", Reply.models("mistral-7b", MODEL));

            Result r = new ModelApiCheck(client(server.baseUrl(), MODEL, "sk-check"), TIMEOUT).run();

            assertThat(r).isEqualTo(new Result(Verdict.OK, "model API at " + server.baseUrl() + " serves '" + MODEL
                    + "'", List.of(MODEL)));
            Recorded listing = server.onlyRequest();
            assertThat(listing.method()).isEqualTo("GET");
            assertThat(listing.path()).isEqualTo("/v1/models");
            assertThat(listing.header("Authorization")).isEqualTo("Bearer sk-check");
        }

        @Test
        void anOllamaModelWithoutATagIsServedAsLatest() throws Exception {
            server.on("GET", "/v1/models", Reply.models("llama3:latest", "qwen2.5:7b"));

            assertThat(check("llama3").verdict()).isEqualTo(Verdict.OK);
            assertThat(check("qwen2.5").verdict()).isEqualTo(Verdict.FATAL);
        }

        @Test
        void anUnlistedModelIsFatalNamingItAndTheFirstTenServed() throws Exception {
            String[] served = IntStream.rangeClosed(1, 12).mapToObj(i -> "model-" + i).toArray(String[]::new);
            server.on("GET", "/v1/models", Reply.models(served));

            Result r = check("llama-3.1-8B");

            assertThat(r).isEqualTo(new Result(Verdict.FATAL, "the model API at " + server.baseUrl()
                    + " does not serve model 'llama-3.1-8B'; it serves model-1, model-2, model-3, model-4, model-5,"
                    + " model-6, model-7, model-8, model-9, model-10 and 2 more; check --model"));
            assertThat(requestLines()).containsExactly("GET /v1/models");
        }

        @Test
        void aShortListIsNamedWhole() throws Exception {
            server.on("GET", "/v1/models", Reply.models("stub-model"));

            assertThat(check("no-such-model").message()).endsWith("it serves stub-model; check --model");
        }
    }

    @Nested
    class WhenTheKeyIsRefused {
        @Test
        void a401OnTheListingIsFatalAndNeverShowsTheKey() throws Exception {
            String key = "sk-proj-ECHOED";
            server.on("GET", "/v1/models", Reply.openAiError(401, "Incorrect API key provided: " + key,
                    "invalid_request_error", "invalid_api_key"));

            Result r = new ModelApiCheck(client(server.baseUrl(), MODEL, key), TIMEOUT).run();

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            // The listing names no model: the line names the request, whether a model was given or not.
            assertThat(r.message()).startsWith("the model API at " + server.baseUrl() + " answered HTTP 401 to GET "
                            + server.baseUrl() + "/models: Incorrect API key provided: [REDACTED]")
                    .endsWith("check the API key (--api-key or OPENAI_API_KEY)")
                    .doesNotContain(key);
            assertThat(requestLines()).containsExactly("GET /v1/models");
        }

        @Test
        void a403OnTheListingIsFatal() throws Exception {
            server.on("GET", "/v1/models", Reply.openAiError(403, "forbidden", "permission_error", null));

            Result r = check(MODEL);

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(r.message()).contains("HTTP 403").contains("check --api-key and --model");
        }

        @Test
        void a401OnTheProbeIsFatal() throws Exception {
            server.on("GET", "/v1/models", Reply.status(404, "{\"detail\":\"Not Found\"}"))
                    .on("POST", "/v1/chat/completions", Reply.openAiError(401, "missing key", "auth", null));

            Result r = check(MODEL);

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(r.message()).contains("HTTP 401").contains("missing key").contains("--api-key");
        }
    }

    @Nested
    class WhenTheServerDoesNotListItsModels {
        @Test
        void theProbeIsAnEmptyConversationThatTheServerRejectsWithoutRunningTheModel() throws Exception {
            server.on("GET", "/v1/models", Reply.status(404, "{\"detail\":\"Not Found\"}"))
                    .on("POST", "/v1/chat/completions", Reply.openAiError(400, "'messages' must not be empty",
                            "invalid_request_error", null));

            Result r = new ModelApiCheck(client(server.baseUrl(), MODEL, "sk-probe"), TIMEOUT).run();

            assertThat(r).isEqualTo(new Result(Verdict.OK, "model API at " + server.baseUrl() + " answered GET"
                    + " /models with HTTP 404; its chat completions endpoint answered a probe with HTTP 400, so model '"
                    + MODEL + "' is taken on trust", List.of(MODEL)));
            assertThat(requestLines()).containsExactly("GET /v1/models", "POST /v1/chat/completions");
            Recorded probe = server.requests().get(1);
            assertThat(probe.header("Authorization")).isEqualTo("Bearer sk-probe");
            JsonNode body = probe.json();
            assertThat(body.get("model").asText()).isEqualTo(MODEL);
            assertThat(body.get("messages").isArray()).isTrue();
            assertThat(body.get("messages")).isEmpty();
            assertThat(body.get("max_tokens").asInt()).isEqualTo(1);
        }

        @Test
        void anyAnswerButTheWorkersFaultsFromTheProbeIsOk() throws Exception {
            server.on("GET", "/v1/models", Reply.status(405, "{\"detail\":\"Method Not Allowed\"}"));
            for (Reply probe : List.of(Reply.ok("it ran anyway"), Reply.status(422, "{\"detail\":[]}"),
                    Reply.status(500, "{\"error\":{\"message\":\"boom\"}}"), Reply.status(429, "{}"))) {
                server.on("POST", "/v1/chat/completions", probe);

                assertThat(check(MODEL).verdict()).as("probe answered %d", probe.status).isEqualTo(Verdict.OK);
            }
        }

        @Test
        void aListingThatIsNotOneFallsBackToTheProbe() throws Exception {
            server.on("GET", "/v1/models", Reply.status(200, "<html>a dashboard</html>").header("Content-Type",
                            "text/html"))
                    .on("POST", "/v1/chat/completions", Reply.status(400, "{}"));

            Result r = check(MODEL);

            assertThat(r.verdict()).isEqualTo(Verdict.OK);
            assertThat(r.message()).contains("does not list its models");
            assertThat(requestLines()).containsExactly("GET /v1/models", "POST /v1/chat/completions");
        }

        @Test
        void anEmptyListFallsBackToTheProbe() throws Exception {
            server.on("GET", "/v1/models", Reply.models())
                    .on("POST", "/v1/chat/completions", Reply.status(404, "{\"error\":\"model \\\"llama3\\\" not"
                            + " found, try pulling it first\"}"));

            Result r = check("llama3");

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(r.message()).contains("model \"llama3\" not found, try pulling it first");
        }

        @Test
        void a404FromTheProbeIsFatalAndNamesBothTheUrlAndTheModel() throws Exception {
            URI wrongPath = URI.create(server.baseUrl().toString().replace("/v1", "/v2"));
            server.otherwise(Reply.status(404, "{\"detail\":\"Not Found\"}"));

            Result r = new ModelApiCheck(client(wrongPath, MODEL, null), TIMEOUT).run();

            assertThat(r).isEqualTo(new Result(Verdict.FATAL, "the model API at " + wrongPath + " answered HTTP 404 to"
                    + " POST " + wrongPath + "/chat/completions for model '" + MODEL + "': Not Found; either"
                    + " --model-api is not the API's base URL (the part before /chat/completions, such as"
                    + " http://localhost:8000/v1) or the server does not serve model '" + MODEL + "' (check --model)"));
            assertThat(requestLines()).containsExactly("GET /v2/models", "POST /v2/chat/completions");
        }

        @Test
        void aBaseUrlWithoutV1IsToldToAddV1WhenTheApiListsItsModelsThere() throws Exception {
            URI withoutV1 = URI.create(server.baseUrl().toString().replaceAll("/v1$", ""));
            server.on("GET", "/v1/models", Reply.status(200, "{\"object\":\"list\",\"data\":[{\"id\":\"" + MODEL
                    + "\"}]}")).otherwise(Reply.status(404, "{\"detail\":\"Not Found\"}"));

            for (List<String> models : List.of(List.of(MODEL), List.<String>of())) {
                int before = server.requestCount();
                Result r = new ModelApiCheck(client(withoutV1, MODEL, null), models, TIMEOUT).run();

                assertThat(r).as("with models %s", models).isEqualTo(new Result(Verdict.FATAL, "the model API at "
                        + withoutV1 + " answered HTTP 404 to GET " + withoutV1 + "/models, but " + withoutV1
                        + "/v1/models lists '" + MODEL + "': --model-api is the API's base URL, the part before"
                        + " /chat/completions; did you mean --model-api " + withoutV1 + "/v1?"));
                assertThat(r.message()).doesNotContain("--model ");
                assertThat(requestLines().subList(before, server.requestCount()))
                        .containsExactly("GET /models", "GET /v1/models");
            }
        }

        @Test
        void aBaseUrlWithoutV1WhoseV1ListsNothingEitherIsProbedAsBefore() throws Exception {
            URI withoutV1 = URI.create(server.baseUrl().toString().replaceAll("/v1$", ""));
            server.otherwise(Reply.status(404, "{\"detail\":\"Not Found\"}"));

            Result r = new ModelApiCheck(client(withoutV1, MODEL, null), TIMEOUT).run();

            assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(r.message()).contains("answered HTTP 404 to POST " + withoutV1 + "/chat/completions");
            assertThat(requestLines()).containsExactly("GET /models", "GET /v1/models", "POST /chat/completions");
        }

        @Test
        void aRedirectOrA405FromTheProbeIsFatal() throws Exception {
            server.on("GET", "/v1/models", Reply.status(404, "{}"))
                    .on("POST", "/v1/chat/completions", Reply.status(308, "").header("Location", "https://h/v1"));
            Result redirected = check(MODEL);
            server.on("POST", "/v1/chat/completions", Reply.status(405, "{}"));
            Result notAllowed = check(MODEL);

            assertThat(redirected.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(redirected.message()).contains("HTTP 308, a redirect to https://h/v1")
                    .contains("check --model-api");
            assertThat(notAllowed.verdict()).isEqualTo(Verdict.FATAL);
            assertThat(notAllowed.message()).contains("HTTP 405");
        }
    }

    @Nested
    class WhenTheServerIsNotReady {
        @Test
        void a5xxOnTheListingIsTransientAfterOneRequest() throws Exception {
            server.on("GET", "/v1/models", Reply.status(503, "{\"error\":{\"message\":\"Loading model\"}}"));

            Result r = check(MODEL);

            assertThat(r).isEqualTo(new Result(Verdict.TRANSIENT, "the model API at " + server.baseUrl()
                    + " answered GET /models with HTTP 503: Loading model"));
            assertThat(requestLines()).containsExactly("GET /v1/models");
        }

        @Test
        void aRefusedConnectionIsTransient() throws Exception {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }

            Result r = new ModelApiCheck(client(URI.create("http://127.0.0.1:" + port + "/v1"), MODEL, null), TIMEOUT)
                    .run();

            assertThat(r).isEqualTo(new Result(Verdict.TRANSIENT, "cannot connect to the model API at 127.0.0.1:"
                    + port + " (Connection refused); is the model server running?"));
        }

        @Test
        void aServerThatNeverAnswersIsTransientAfterTheTimeout() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                long start = System.nanoTime();
                Result r = new ModelApiCheck(client(silent.baseUrl(), MODEL, null), Duration.ofMillis(300)).run();
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                assertThat(r).isEqualTo(new Result(Verdict.TRANSIENT, "the model API at " + silent.baseUrl()
                        + " did not answer within 300 ms"));
                assertThat(elapsedMs).isBetween(280L, 5_000L);
            }
        }
    }

    @Nested
    class WhenTheConnectionCannotBeMade {
        @Test
        void aTlsFailureIsFatal() throws Exception {
            try (SilentServer plain = SilentServer.greeting("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")) {
                Result r = new ModelApiCheck(client(plain.httpsBaseUrl(), MODEL, null), TIMEOUT).run();

                assertThat(r.verdict()).isEqualTo(Verdict.FATAL);
                assertThat(r.message()).startsWith("TLS with the model API at 127.0.0.1:" + plain.port() + " failed (")
                        .endsWith("check --model-api (http or https?) and the server's certificate");
            }
        }
    }

    @Test
    void refusesAClosedClientAndABadTimeout() {
        HttpModelClient c = client(server.baseUrl(), MODEL, null);
        assertThatThrownBy(() -> new ModelApiCheck(c, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
        c.close();
        assertThatThrownBy(() -> new ModelApiCheck(c).run())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(server.requestCount()).isZero();
    }
}
