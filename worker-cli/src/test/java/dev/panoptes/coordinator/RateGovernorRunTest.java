package dev.panoptes.coordinator;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.SpecParams;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two workers with their real model client against one rate-limited model API (the stub answers
 * 429 beyond 3 requests in flight, while the workers could send 12): the workers report the 429s,
 * the coordinator cuts the fleet's limit on that API, and the run completes with every answer
 * stored and the governor's work in the summary.
 */
class RateGovernorRunTest {
    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private final List<HttpModelClient> clients = new ArrayList<>();

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        clients.forEach(HttpModelClient::close);
        threads.shutdownNow();
    }

    @Test
    void workersReport429sAndTheCoordinatorCutsTheFleetsLimitOnTheirApi() throws Exception {
        try (StubModelServer api = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(20), 32, 3)) {
            StringWriter out = new StringWriter();
            CoordinatorRun run = new CoordinatorRun(settings(), new PrintWriter(out, true),
                    new PrintWriter(new StringWriter(), true), false, "java -jar worker.jar")
                    .onListening(address -> {
                        startWorker(address, "w1", api.baseUrl().toString());
                        startWorker(address, "w2", api.baseUrl().toString());
                    });

            assertThat(run.run()).isZero();

            String summary = out.toString();
            assertThat(summary).contains("answers:     60 of 60 stored, 0 missing");
            assertThat(api.throttledCount()).as("the API did answer 429").isPositive();
            Matcher rate = Pattern.compile("rate: +" + Pattern.quote(api.baseUrl().toString())
                    + " answered 429 (\\d+) times; the fleet's limit on it was cut (\\d+) times").matcher(summary);
            assertThat(rate.find()).as(summary).isTrue();
            assertThat(Long.parseLong(rate.group(1))).as("429s the workers reported").isPositive()
                    .isLessThanOrEqualTo(api.throttledCount());
            assertThat(Integer.parseInt(rate.group(2))).as("cuts").isPositive();
        }
    }

    private void startWorker(InetSocketAddress coordinator, String id, String modelApi) {
        HttpModelClient client = HttpModelClient.builder(java.net.URI.create(modelApi), "stub")
                .backoffBase(Duration.ofMillis(5)).backoffCap(Duration.ofMillis(50)).maxAttempts(20)
                .maxConnections(6).build();
        synchronized (clients) {
            clients.add(client);
        }
        WorkerOptions options = WorkerOptions.defaults().withModels(List.of("stub"))
                .withLabels(Map.of("endpoint", modelApi))
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        AsyncJobRunner runner = new EvalJobRunner(client);
        WorkerLoop loop = new WorkerLoop(coordinator, id, 6, runner, options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private CoordinatorSettings settings() throws Exception {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("suite.jsonl"), sb.toString());
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 1, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("stub"), "exact", 1, null, null);
    }
}
