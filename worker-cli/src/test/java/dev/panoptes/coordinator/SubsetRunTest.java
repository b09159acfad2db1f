package dev.panoptes.coordinator;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.suite.SuiteSubset;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subset run against the stub model, then the whole suite on the same database: the subset asks
 * only its vignettes, and the whole suite is a new run beside it, not a resumption of it.
 */
class SubsetRunTest {
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
    void aSubsetAsksOnlyItsVignettesUnderItsOwnRunAndNeverJoinsTheWholeSuitesRun() throws Exception {
        try (StubModelServer api = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ZERO, 4)) {
            CoordinatorSettings settings = settings();
            StringWriter subsetLines = new StringWriter();
            assertThat(run(settings, SuiteSubset.first(3).shuffled(7), api, subsetLines)).isZero();
            assertThat(api.requestCount()).isEqualTo(3);
            assertThat(subsetLines.toString()).contains("answers:     3 of 3 stored");

            StringWriter wholeLines = new StringWriter();
            assertThat(run(settings, SuiteSubset.ALL, api, wholeLines)).isZero();

            assertThat(api.requestCount()).isEqualTo(3 + 10);
            assertThat(wholeLines.toString()).contains("new run").contains("differs in subset shuffled (seed 7), first 3 -> (none)")
                    .doesNotContain("resuming").contains("answers:     10 of 10 stored");
        }
    }

    private int run(CoordinatorSettings settings, SuiteSubset subset, StubModelServer api, StringWriter lines)
            throws Exception {
        PrintWriter both = new PrintWriter(lines, true);
        return new CoordinatorRun(settings, both, both, false, "java -jar worker.jar")
                .withSubset(subset)
                .onListening(address -> startWorker(address, api.baseUrl().toString()))
                .run();
    }

    private void startWorker(InetSocketAddress coordinator, String modelApi) {
        HttpModelClient client = HttpModelClient.builder(java.net.URI.create(modelApi), "stub").build();
        WorkerLoop loop = new WorkerLoop(coordinator, "w" + workers.size(), 2, (dev.panoptes.control.AsyncJobRunner) new EvalJobRunner(client),
                WorkerOptions.defaults().withModels(List.of("stub")).withHeartbeat(Duration.ofMillis(200)));
        synchronized (workers) {
            clients.add(client);
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private CoordinatorSettings settings() throws Exception {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i)
                    .append(" + 1?\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("suite.jsonl"), sb.toString());
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 2, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("stub"), "exact", 1, null, null);
    }
}
