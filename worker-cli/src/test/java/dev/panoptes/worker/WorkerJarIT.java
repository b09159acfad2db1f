package dev.panoptes.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
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
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The built {@code worker.jar} as a real process, against a fake coordinator and a stub
 * OpenAI-compatible model API on loopback (which lists its one model, so that the worker's
 * startup check passes; {@link WorkerStartupIT} covers the check failing). Runs in
 * surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(60)
class WorkerJarIT {

    private final StubModelApi modelApi;
    private final JarProcesses jars;

    WorkerJarIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                PATIENCE);
        modelApi = jars.closeLater(StubModelApi.start());
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void registersAndAnswersAJobThroughTheModelApiWithSecretsFromTheEnvironment() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker(Map.of("OPENAI_API_KEY", "sk-it-secret", "PANOPTES_TOKEN", "tok-it-secret"),
                "--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api", modelApi.baseUrl(),
                "--model", "stub-model", "--id", "it-worker-1", "--capacity", "2", "--heartbeat-timeout", "60s");

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Registered(5000));
        Job job = new Job(JobId.of("run1-0001"), new EvalSpec("demo", List.of(new Vignette("a", "hi"))));
        peer.send(new Message.Assign(job));
        Message.Result result = peer.expect(Message.Result.class);

        Message.Register register = peer.register();
        assertThat(register.workerId()).isEqualTo("it-worker-1");
        assertThat(register.capacity()).isEqualTo(2);
        assertThat(register.protocol()).isEqualTo(1);
        assertThat(register.token()).isEqualTo("tok-it-secret");
        assertThat(register.labels()).containsEntry("model", "stub-model");
        assertThat(register.models()).containsExactly("stub-model");
        assertThat(result.outcome().jobId()).isEqualTo(job.id());
        ResponseRecord record = result.outcome().records().get(0);
        assertThat(record.vignetteId()).isEqualTo("a");
        assertThat(record.response()).isEqualTo("re: hi");
        assertThat(record.model()).isEqualTo("stub-model");
        assertThat(modelApi.authorizations).containsOnly("Bearer sk-it-secret");
        assertThat(log(worker)).contains("worker it-worker-1 starting: coordinator 127.0.0.1:" + coordinator.port()
                        + ", model API " + modelApi.baseUrl() + ", model stub-model, capacity 2")
                .doesNotContain("sk-it-secret").doesNotContain("tok-it-secret");

        worker.destroy();
        assertThat(peer.framesUntilEndOfStream()).containsExactly(new Message.Drain());
        peer.close();
        assertExitCode(worker, 0);
    }

    @Test
    void withoutModelsNamedItOffersWhatTheApiListsAndAsksTheModelEachJobNames() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker(Map.of(), "--coordinator", "127.0.0.1:" + coordinator.port(), "--model-api",
                modelApi.baseUrl(), "--id", "it-worker-models", "--heartbeat-timeout", "60s");

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        assertThat(peer.register().models()).containsExactly("stub-model", "stub-model-2");
        peer.send(new Message.Registered(5000));
        Job job = new Job(JobId.of("run2-0001"), new EvalSpec("demo", List.of(new Vignette("b", "yo")),
                SpecParams.NONE.withModel("stub-model-2")));
        peer.send(new Message.Assign(job));

        ResponseRecord record = peer.expect(Message.Result.class).outcome().records().get(0);
        assertThat(record.model()).as("the model the API says answered").isEqualTo("stub-model-2");
        assertThat(log(worker)).contains("models: those the API lists")
                .contains("serves 'stub-model', 'stub-model-2'; offering them all to the coordinator");

        worker.destroy();
        peer.close();
        assertExitCode(worker, 0);
    }

    @Test
    void onSigtermSendsDrainAnswersTheJobItHoldsAndExitsZero() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker(Map.of(), "--coordinator", "127.0.0.1:" + coordinator.port(),
                "--model-api", modelApi.baseUrl(), "--model", "stub-model", "--id", "it-worker-2",
                "--heartbeat-timeout", "60s", "--grace", "30s");
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        modelApi.hold("think slowly");
        peer.send(new Message.Assign(new Job(JobId.of("in-flight"),
                new EvalSpec("demo", List.of(new Vignette("a", "think slowly"))))));
        await().atMost(PATIENCE).until(() -> modelApi.received.contains("think slowly"));

        worker.destroy(); // SIGTERM on Linux
        peer.expect(Message.Drain.class);
        modelApi.release("think slowly");
        Message.Result result = peer.expect(Message.Result.class);
        List<Message> afterResult = peer.framesUntilEndOfStream();
        peer.close();

        assertThat(result.outcome().jobId()).isEqualTo(JobId.of("in-flight"));
        assertThat(result.outcome().records().get(0).response()).isEqualTo("re: think slowly");
        assertThat(afterResult).isEmpty();
        assertExitCode(worker, 0);
        assertThat(log(worker)).contains("shutdown signal received; draining")
                .contains("stopped cleanly, no job left unanswered; exiting");
    }

    @Test
    void waitsForACoordinatorThatIsNotUpYetAndRegistersOnceItIs() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Process worker = startWorker(Map.of(), "--coordinator", "127.0.0.1:" + port, "--model-api",
                modelApi.baseUrl(), "--model", "stub-model", "--id", "it-worker-3", "--heartbeat-timeout", "60s");
        await().atMost(PATIENCE).until(() -> log(worker).contains("cannot connect to coordinator 127.0.0.1:" + port));

        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.startOn(port));
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        assertThat(peer.register().workerId()).isEqualTo("it-worker-3");
        assertThat(log(worker)).contains("Connection refused; reconnecting in");
        worker.destroy();
        peer.framesUntilEndOfStream();
        peer.close();
        assertExitCode(worker, 0);
    }

    @Test
    void logsARetryableRejectionOnEveryAttemptAndKeepsTrying() throws Exception {
        FakeCoordinator coordinator = jars.closeLater(FakeCoordinator.start());
        Process worker = startWorker(Map.of(), "--coordinator", "127.0.0.1:" + coordinator.port(),
                "--model-api", modelApi.baseUrl(), "--model", "stub-model", "--token", "some-token");
        String reason = "the coordinator is not taking workers yet";

        for (int attempt = 0; attempt < 2; attempt++) {
            FakeCoordinator.Peer peer = coordinator.acceptRegistered();
            peer.send(new Message.Rejected(reason, true));
            peer.framesUntilEndOfStream();
            peer.close();
        }

        await().atMost(PATIENCE).until(() -> JarProcesses.occurrences(log(worker), "rejected the registration for now: " + reason) >= 2);
        assertThat(log(worker)).doesNotContain("some-token");
        worker.destroy();
        assertExitCode(worker, 0);
    }

    @Test
    void printsUsageWithHelpAndOneLineWithExitCode2ForABadValue() throws Exception {
        Process help = startWorker(Map.of(), "--help");
        assertExitCode(help, 0);
        assertThat(log(help)).startsWith("Usage: worker.jar").contains("--coordinator=HOST:PORT");

        Process bad = startWorker(Map.of(), "--coordinator", "127.0.0.1:7070", "--model-api", modelApi.baseUrl(),
                "--model", "m", "--capacity", "0");
        assertExitCode(bad, 2);
        assertThat(log(bad).lines()).containsExactly(
                "Invalid value for option '--capacity': must be at least 1, got 0",
                "Try 'worker.jar --help' for more information.");
    }

    // ---- helpers ----

    private Process startWorker(Map<String, String> env, String... args) throws IOException {
        return jars.start(env, args);
    }

    private String log(Process p) throws IOException {
        return jars.log(p);
    }

    private void assertExitCode(Process p, int expected) throws Exception {
        jars.assertExitCode(p, expected);
    }

    /**
     * An OpenAI-compatible chat completions endpoint that answers {@code re: <last user message>}.
     * A test can hold a prompt until it releases it.
     */
    static final class StubModelApi implements AutoCloseable {
        private static final ObjectMapper JSON = new ObjectMapper();

        private final HttpServer server;
        private final ExecutorService threads = Executors.newCachedThreadPool();
        private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();
        final List<String> received = new CopyOnWriteArrayList<>();
        final List<String> authorizations = new CopyOnWriteArrayList<>();

        private StubModelApi(HttpServer server) {
            this.server = server;
            server.createContext("/v1/chat/completions", this::handle);
            server.createContext("/v1/models", this::listModels);
            server.setExecutor(threads);
            server.start();
        }

        static StubModelApi start() {
            try {
                return new StubModelApi(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
            } catch (IOException e) {
                throw new IllegalStateException("cannot start the stub model API", e);
            }
        }

        String baseUrl() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
        }

        void hold(String prompt) {
            holds.put(prompt, new CountDownLatch(1));
        }

        void release(String prompt) {
            holds.get(prompt).countDown();
        }

        private void handle(HttpExchange exchange) throws IOException {
            try (exchange) {
                JsonNode request = JSON.readTree(exchange.getRequestBody());
                JsonNode messages = request.path("messages");
                String prompt = messages.get(messages.size() - 1).path("content").asText();
                String auth = exchange.getRequestHeaders().getFirst("Authorization");
                if (auth != null) {
                    authorizations.add(auth);
                }
                received.add(prompt);
                CountDownLatch hold = holds.get(prompt);
                if (hold != null && !hold.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
                    exchange.sendResponseHeaders(503, -1);
                    return;
                }
                Map<String, Object> body = Map.of(
                        "id", "chatcmpl-stub",
                        "object", "chat.completion",
                        "model", request.path("model").asText(),
                        "choices", List.of(Map.of("index", 0, "finish_reason", "stop",
                                "message", Map.of("role", "assistant", "content", "re: " + prompt))),
                        "usage", Map.of("prompt_tokens", 3, "completion_tokens", 2, "total_tokens", 5));
                byte[] bytes = JSON.writeValueAsBytes(body);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, bytes.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** The list a worker's startup check reads: this API serves "stub-model" and "stub-model-2". */
        private void listModels(HttpExchange exchange) throws IOException {
            try (exchange) {
                byte[] bytes = ("{\"object\":\"list\",\"data\":[{\"id\":\"stub-model\",\"object\":\"model\"},"
                        + "{\"id\":\"stub-model-2\",\"object\":\"model\"}]}")
                        .getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, bytes.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}
