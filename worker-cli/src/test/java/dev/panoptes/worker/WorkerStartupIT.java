package dev.panoptes.worker;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.panoptes.control.wire.Message;
import dev.panoptes.testing.FakeCoordinator;
import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the built {@code worker.jar} starts, or refuses to, as a real process: the model API check
 * before registering (exit 3), a registration the coordinator rejects for good (exit 4), and
 * {@code --no-model-check}. Against a fake coordinator and a scripted model API on loopback; runs
 * in surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(60)
class WorkerStartupIT {
    private static final String MODEL = "stub-model";

    private final ModelApi modelApi;
    private final JarProcesses jars;

    WorkerStartupIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                PATIENCE);
        modelApi = jars.closeLater(ModelApi.start());
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aWrongModelApiPathExits3WithOneClearLineAndNeverConnectsToTheCoordinator() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        String wrongPath = modelApi.url("/v2");
        Process worker = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api", wrongPath,
                "--model", MODEL, "--id", "it-bad-path");
        // Alongside, one JVM start for two cases: a base URL without /v1 (and no --model) is told
        // to add /v1, not to name its models.
        String withoutV1 = modelApi.url("");
        Process noV1 = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api", withoutV1,
                "--id", "it-no-v1");

        assertExitCode(worker, 3);
        assertExitCode(noV1, 3);
        assertThat(errorLines(noV1)).singleElement().asString()
                .endsWith("ERROR WorkerProcess - worker=it-no-v1 - the model API check failed: the model API at "
                        + withoutV1 + " answered HTTP 404 to GET " + withoutV1 + "/models, but " + withoutV1
                        + "/v1/models lists '" + MODEL + "': --model-api is the API's base URL, the part before"
                        + " /chat/completions; did you mean --model-api " + withoutV1 + "/v1? Exiting with code 3"
                        + " without registering");
        assertThat(log(noV1)).doesNotContain("name them with --model");
        assertThat(modelApi.requests).filteredOn(r -> !r.contains("/v2/"))
                .containsExactly("GET /models", "GET /v1/models");

        assertThat(errorLines(worker)).singleElement().asString()
                .endsWith("ERROR WorkerProcess - worker=it-bad-path - the model API check failed: the model API at "
                        + wrongPath + " answered HTTP 404 to POST " + wrongPath + "/chat/completions for model '"
                        + MODEL + "': Not Found; either --model-api is not the API's base URL (the part before"
                        + " /chat/completions, such as http://localhost:8000/v1) or the server does not serve model '"
                        + MODEL + "' (check --model). Exiting with code 3 without registering");
        assertThat(modelApi.requests).filteredOn(r -> r.contains("/v2/"))
                .containsExactly("GET /v2/models", "POST /v2/chat/completions");
        assertThat(coordinator.takePendingConnection()).as("a connection to the coordinator").isFalse();
        assertThat(log(worker)).doesNotContain("connected to coordinator").doesNotContain("Exception");
    }

    @Test
    void aModelTheApiDoesNotListExits3NamingTheModelAndWhatItServes() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api",
                modelApi.url("/v1"), "--model", "llama-3.1-8b", "--id", "it-bad-model");

        assertExitCode(worker, 3);

        assertThat(errorLines(worker)).singleElement().asString()
                .endsWith("ERROR WorkerProcess - worker=it-bad-model - the model API check failed: the model API at "
                        + modelApi.url("/v1") + " does not serve model 'llama-3.1-8b'; it serves " + MODEL
                        + "; check --model. Exiting with code 3 without registering");
        assertThat(modelApi.requests).containsExactly("GET /v1/models");
        assertThat(coordinator.takePendingConnection()).as("a connection to the coordinator").isFalse();
    }

    @Test
    void aRefusedKeyWithoutModelExits3NamingTheRequestNotAModelNull() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        String locked = modelApi.url("/locked/v1");
        Process worker = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api", locked,
                "--api-key", "sk-wrong", "--id", "it-bad-key");

        assertExitCode(worker, 3);

        assertThat(errorLines(worker)).singleElement().asString()
                .endsWith("ERROR WorkerProcess - worker=it-bad-key - the model API check failed: the model API at "
                        + locked + " answered HTTP 401 to GET " + locked + "/models: Incorrect API key provided"
                        + " (type invalid_request_error, code invalid_api_key); check the API key (--api-key or"
                        + " OPENAI_API_KEY). Exiting with code 3 without registering");
        assertThat(log(worker)).doesNotContain("'null'").doesNotContain("sk-wrong");
        assertThat(coordinator.takePendingConnection()).as("a connection to the coordinator").isFalse();
    }

    @Test
    void aWrongTokenExits4PrintingTheCoordinatorsReasonOnce() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        String reason = "wrong token; check --token on the worker against the coordinator's";
        Process worker = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api",
                modelApi.url("/v1"), "--model", MODEL, "--id", "it-bad-token", "--token", "wrong-token");

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Rejected(reason, false));
        assertExitCode(worker, 4);

        assertThat(JarProcesses.occurrences(log(worker), reason)).as("times the reason is printed; output:%n%s", log(worker))
                .isEqualTo(1);
        assertThat(errorLines(worker)).singleElement().asString()
                .endsWith("ERROR WorkerProcess - worker=it-bad-token - coordinator 127.0.0.1:" + coordinator.port()
                        + " rejected this worker for good: " + reason + ". Exiting with code 4");
        assertThat(log(worker)).contains("model API at " + modelApi.url("/v1") + " serves '" + MODEL + "'")
                .doesNotContain("wrong-token").doesNotContain("reconnecting").doesNotContain("retrying");
        assertThat(peer.framesUntilEndOfStream()).isEmpty();
        assertThat(coordinator.takePendingConnection()).as("a second connection to the coordinator").isFalse();
    }

    @Test
    void noModelCheckSkipsTheCheckAndRegistersWhateverTheModelApiAnswers() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker("--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api",
                modelApi.url("/v2"), "--model", MODEL, "--id", "it-no-check", "--no-model-check",
                "--heartbeat-timeout", "60s");

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        assertThat(peer.register().workerId()).isEqualTo("it-no-check");
        assertThat(modelApi.requests).isEmpty();
        worker.destroy();
        assertThat(peer.framesUntilEndOfStream()).containsExactly(new Message.Drain());
        peer.close();
        assertExitCode(worker, 0);
        assertThat(log(worker)).contains("model API check skipped (--no-model-check)").doesNotContain("ERROR");
    }

    // ---- helpers ----

    private Process startWorker(String... args) throws IOException {
        return jars.start(args);
    }

    private String log(Process p) throws IOException {
        return jars.log(p);
    }

    private List<String> errorLines(Process p) throws IOException {
        return log(p).lines().filter(l -> l.contains(" ERROR ")).toList();
    }

    private void assertExitCode(Process p, int expected) throws Exception {
        jars.assertExitCode(p, expected);
    }

    /**
     * A model API that serves {@value #MODEL} under {@code /v1}, as vLLM would: its model list
     * at {@code GET /v1/models}, OpenAI's 401 for a wrong key for every path under {@code /locked/},
     * and FastAPI's 404 ({@code {"detail":"Not Found"}}) for every other path. Records each request as "METHOD path".
     */
    static final class ModelApi implements AutoCloseable {
        private final HttpServer server;
        private final ExecutorService threads = Executors.newCachedThreadPool();
        final List<String> requests = new CopyOnWriteArrayList<>();

        private ModelApi(HttpServer server) {
            this.server = server;
            server.createContext("/", this::handle);
            server.setExecutor(threads);
            server.start();
        }

        static ModelApi start() {
            try {
                return new ModelApi(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
            } catch (IOException e) {
                throw new IllegalStateException("cannot start the scripted model API", e);
            }
        }

        /** {@code http://127.0.0.1:port} followed by {@code path}. */
        String url(String path) {
            return "http://127.0.0.1:" + server.getAddress().getPort() + path;
        }

        private void handle(HttpExchange exchange) throws IOException {
            try (exchange) {
                exchange.getRequestBody().readAllBytes();
                String method = exchange.getRequestMethod();
                String path = exchange.getRequestURI().getPath();
                requests.add(method + " " + path);
                if (path.startsWith("/locked/")) {
                    send(exchange, 401, "{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":"
                            + "\"invalid_request_error\",\"code\":\"invalid_api_key\"}}");
                } else if (method.equals("GET") && path.equals("/v1/models")) {
                    send(exchange, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"" + MODEL
                            + "\",\"object\":\"model\",\"owned_by\":\"vllm\"}]}");
                } else {
                    send(exchange, 404, "{\"detail\":\"Not Found\"}");
                }
            }
        }

        private static void send(HttpExchange exchange, int status, String json) throws IOException {
            byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}
