package dev.panoptes.cli;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerProcess;
import dev.panoptes.worker.WorkerSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker with the defaults fills a batching model server: a worker process's runner and
 * {@code eval}'s keep at least 64 requests in flight on a suite of 128 vignettes in jobs of 8 (the
 * coordinator's default job size), which jobs of one vignette at a time could never do. In process,
 * against the stub model API, which counts the most requests it answered at once.
 */
class RequestsInFlightTest {
    private static final Pattern LISTENING = Pattern.compile("listening for workers on [^:]+:(\\d+)");
    private static final int VIGNETTES = 128;

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private StubModelServer stub;
    private Path suite;

    @BeforeEach
    void start() throws Exception {
        // Long enough that every request the worker can open is open at once.
        stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(400), 256);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < VIGNETTES; i++) {
            lines.add("{\"id\": \"q" + i + "\", \"prompt\": \"What is " + i + " + 1?\", \"expected\": \"" + (i + 1)
                    + "\"}");
        }
        suite = Files.write(dir.resolve("suite.jsonl"), lines);
    }

    @AfterEach
    void stop() {
        threads.shutdownNow();
        stub.close();
    }

    @Test
    void aDefaultWorkerKeepsAtLeast64RequestsInFlight() throws Exception {
        StringWriter err = new StringWriter();
        Path db = dir.resolve("fleet.db");
        Future<Integer> coordinator = threads.submit(() -> WorkerMain.run(new String[] {"coordinator", "--listen",
                "127.0.0.1:0", "--suite", suite.toString(), "--model", StubModelServer.MODEL, "--db", db.toString()},
                new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), Map.of()));
        await().atMost(Duration.ofSeconds(20)).until(() -> LISTENING.matcher(err.toString()).find());
        Matcher listening = LISTENING.matcher(err.toString());
        assertThat(listening.find()).isTrue();

        // The worker's command line with nothing but where to connect: its defaults.
        AtomicReference<WorkerSettings> parsed = new AtomicReference<>();
        int parsedExit = WorkerMain.newCommandLine(Map.of(), settings -> {
            parsed.set(settings);
            return 0;
        }).execute("--coordinator", "127.0.0.1:" + listening.group(1), "--model-api", stub.baseUrl().toString(),
                "--model", StubModelServer.MODEL);
        assertThat(parsedExit).isZero();
        WorkerSettings settings = parsed.get();
        assertThat(settings.requests()).isEqualTo(64);

        try (HttpModelClient client = WorkerProcess.modelClient(settings);
             WorkerLoop worker = new WorkerLoop(settings.coordinator(), settings.workerId(), settings.capacity(),
                     (AsyncJobRunner) WorkerProcess.runner(client, settings), settings.options().withModels(settings.models()))) {
            Future<?> unused = threads.submit(() -> {
                worker.runForever();
                return null;
            });
            assertThat(coordinator.get(60, TimeUnit.SECONDS)).as("the coordinator's exit; its console:%n%s", err)
                    .isZero();
        }
        assertThat(stub.peakConcurrency()).as("requests in flight at once: at least 64, never past the budget")
                .isEqualTo(64);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isEqualTo(VIGNETTES);
        }
    }

    @Test
    void evalWithTheDefaultsKeepsAtLeast64RequestsInFlight() throws Exception {
        StringWriter err = new StringWriter();
        Path db = dir.resolve("eval.db");
        int exit = WorkerMain.run(new String[] {"eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", db.toString()},
                new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), Map.of());

        assertThat(exit).as("eval's exit; its console:%n%s", err).isZero();
        assertThat(stub.peakConcurrency()).as("requests in flight at once: at least 64, never past the budget")
                .isEqualTo(64);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isEqualTo(VIGNETTES);
        }
    }

    @Test
    void evalRefusesABadRequestsValueWithExit2() {
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("r.db").toString(), "--requests", "0"},
                new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), Map.of());

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--requests': must be at least 1, got 0");
        assertThat(stub.requestCount()).isZero();
    }
}
