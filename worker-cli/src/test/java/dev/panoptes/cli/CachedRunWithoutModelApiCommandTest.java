package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval} when the model API is down: a run whose every answer the response cache holds (same
 * --db, same model, another --run-label) completes without it, and a run with answers left to ask
 * stops with the model API check's error and exit code, keeping what the cache served. Against
 * the stub model API, stopped between the runs.
 */
class CachedRunWithoutModelApiCommandTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    private StubModelServer stub;

    @AfterEach
    void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void aRunTheCacheAnswersWholeNeedsNoModelApiAndOneWithAnswersLeftSaysTheApiIsDown() throws Exception {
        stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ZERO, 4);
        String api = stub.baseUrl().toString();
        Result first = eval(api, "first", "3");
        assertThat(first.exit).as("the first run; its console:%n%s", first.err).isZero();
        stub.close();
        stub = null;

        Result second = eval(api, "second", "3");

        assertThat(second.exit).as("a run the cache answers whole; its console:%n%s", second.err).isZero();
        assertThat(second.err).contains("the model API does not answer: ")
                .contains("response cache: 3 answers served from the database");
        assertThat(second.out).contains("answers:     3 of 3 stored, 0 missing")
                .contains("cache hits:  all 3 answers served from the database without a model call");

        Result third = eval(api, "third", "5");

        assertThat(third.exit).as("two answers not cached; its console:%n%s", third.err)
                .isEqualTo(EvalCommand.EXIT_MODEL_API_UNUSABLE);
        assertThat(third.err).contains("response cache: 3 answers served from the database")
                .contains("the model API check failed: ")
                .contains("answers are left that the response cache does not hold, so the run stops before asking"
                        + " the model, exiting with code " + EvalCommand.EXIT_MODEL_API_UNUSABLE)
                .doesNotContain("Exception");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.recordCount()).as("3 + 3 + the 3 the cache served the third run").isEqualTo(9);
        }
    }

    private Result eval(String api, String label, String limit) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(List.of("eval", "--suite", SUITE.toString(), "--db", dir.resolve("r.db").toString(),
                "--model", StubModelServer.MODEL, "--model-api", api, "--temperature", "0", "--limit", limit,
                "--run-label", label, "--no-progress").toArray(String[]::new), new PrintWriter(out, true),
                new PrintWriter(err, true), Map.of());
        return new Result(exit, out.toString(), err.toString());
    }

    private record Result(int exit, String out, String err) {
    }
}
