package dev.panoptes.cli;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code eval}: the one-command form runs the suite with its worker in process and prints the
 * summary the coordinator + worker form prints for the same suite, and says what is wrong, with
 * its exit code, when the model API is missing or unreachable. In process, with the stub model API.
 */
class EvalCommandTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();
    private static final Pattern LISTENING = Pattern.compile("listening for workers on [^:]+:(\\d+)");

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private StubModelServer stub;

    @BeforeEach
    void startStub() throws Exception {
        stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ofMillis(1),
                8);
    }

    @AfterEach
    void stop() {
        threads.shutdownNow();
        stub.close();
    }

    @Test
    void oneCommandGivesTheSummaryOfTheCoordinatorAndWorkerFormOnTheSameSuite() throws Exception {
        // Both name the one model server alike (--model-id), so they are the same run, under one id.
        StringWriter evalOut = new StringWriter();
        StringWriter evalErr = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", SUITE.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("eval.db").toString(), "--job-size", "4",
                "--epochs", "2", "--model-id", "stub"}, new PrintWriter(evalOut, true), new PrintWriter(evalErr, true), Map.of());
        assertThat(exit).as("eval's exit; its console:%n%s", evalErr).isZero();
        assertThat(evalErr.toString()).doesNotContain("listening for workers")
                .contains("running in this process on worker local");

        String fleet = fleetSummary(dir.resolve("fleet.db"));

        String oneCommand = evalOut.toString();
        assertThat(figures(oneCommand)).as("eval's summary:%n%s%nthe fleet's:%n%s", oneCommand, fleet)
                .isNotEmpty().isEqualTo(figures(fleet));
        assertThat(oneCommand).contains("accuracy").contains(StubModelServer.MODEL);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("eval.db"))) {
            assertThat(store.recordCount()).isEqualTo(80);
        }
    }

    @Test
    void withoutModelApiTheCommandSaysWhatIsMissingAndExits2() throws Exception {
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", SUITE.toString(), "--model", "m", "--db",
                dir.resolve("r.db").toString()}, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                Map.of());

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--model-api=URL'");
        assertThat(dir.resolve("r.db")).doesNotExist();
    }

    @Test
    void anUnreachableModelApiIsNamedBeforeAnythingRunsWithItsExitCode() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", SUITE.toString(), "--model", "m", "--model-api",
                "http://127.0.0.1:" + closedPort + "/v1", "--db", dir.resolve("r.db").toString()},
                new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), Map.of());

        assertThat(exit).isEqualTo(EvalCommand.EXIT_MODEL_API_UNUSABLE);
        assertThat(err.toString()).contains("the model API check failed: ")
                .contains("127.0.0.1:" + closedPort)
                .contains("Nothing was run; exiting with code " + EvalCommand.EXIT_MODEL_API_UNUSABLE)
                .doesNotContain("Exception");
        assertThat(dir.resolve("r.db")).doesNotExist();
    }

    @Test
    void aModelTheApiDoesNotServeIsNamedBeforeAnythingRunsWithItsExitCode() throws Exception {
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", SUITE.toString(), "--model", "gpt-nope",
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("r.db").toString()},
                new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), Map.of());

        assertThat(exit).as("exit; console:%n%s", err).isEqualTo(EvalCommand.EXIT_MODEL_API_UNUSABLE);
        assertThat(err.toString()).contains("the model API check failed: ").contains("gpt-nope");
        assertThat(stub.requestCount()).as("completions asked").isZero();
        assertThat(dir.resolve("r.db")).doesNotExist();
    }

    @Test
    void helpListsTheExitCodes() {
        StringWriter out = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--help"}, new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), Map.of());

        assertThat(exit).isZero();
        assertThat(out.toString()).contains("Exit codes:").contains("--model-api=URL").contains("--capacity=N")
                .contains("  " + EvalCommand.EXIT_MODEL_API_UNUSABLE + "     the model API is unreachable");
    }

    /** The same suite through {@code coordinator} and a worker over loopback TCP: its summary. */
    private String fleetSummary(Path db) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Future<Integer> coordinator = threads.submit(() -> WorkerMain.run(new String[] {"coordinator", "--listen",
                "127.0.0.1:0", "--suite", SUITE.toString(), "--model", StubModelServer.MODEL, "--db", db.toString(),
                "--job-size", "4", "--epochs", "2", "--model-id", "stub"}, new PrintWriter(out, true), new PrintWriter(err, true), Map.of()));
        await().atMost(Duration.ofSeconds(20)).until(() -> LISTENING.matcher(err.toString()).find());
        Matcher listening = LISTENING.matcher(err.toString());
        assertThat(listening.find()).isTrue();
        try (HttpModelClient client = HttpModelClient.builder(stub.baseUrl(), StubModelServer.MODEL)
                .maxConnections(4).build();
             WorkerLoop worker = new WorkerLoop(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                     Integer.parseInt(listening.group(1))), "w1", 4, (AsyncJobRunner) new EvalJobRunner(client),
                     WorkerOptions.defaults().withModels(List.of(StubModelServer.MODEL)))) {
            Future<?> unused = threads.submit(() -> {
                worker.runForever();
                return null;
            });
            assertThat(coordinator.get(30, TimeUnit.SECONDS)).as("the coordinator's exit; its console:%n%s", err)
                    .isZero();
        }
        return out.toString();
    }

    /** The summary's lines but how long the run and its model calls took. */
    private static List<String> figures(String summary) {
        List<String> lines = new ArrayList<>();
        for (String line : summary.split("\n")) {
            if (!line.isBlank() && !line.strip().startsWith("latency:")) {
                lines.add(line.strip().replaceFirst("^Run complete in [0-9.]+ \\S+ ", "Run complete "));
            }
        }
        return lines;
    }
}
