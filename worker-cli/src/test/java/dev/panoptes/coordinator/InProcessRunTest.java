package dev.panoptes.coordinator;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.eval.http.ModelApiCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library's one-machine run, as {@link ModelApiWorker}'s Javadoc shows it: a model API worker
 * in process, checked, then a coordinator run on it that binds nothing and stores every answer
 * under the in-process worker.
 */
class InProcessRunTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    private StubModelServer stub;

    @BeforeEach
    void startStub() throws Exception {
        stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ofMillis(1),
                4);
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    @Test
    void aRunOnAnInProcessModelApiWorkerStoresEveryAnswerAndListensNowhere() throws Exception {
        CoordinatorSettings settings = new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                0), SUITE, dir.resolve("r.db"), 8, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30),
                Duration.ofSeconds(5), null, null, List.of(StubModelServer.MODEL), "exact", 1, null, null);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        try (ModelApiWorker worker = ModelApiWorker.open(stub.baseUrl(), null, settings.models(), 2, null)) {
            assertThat(worker.check().verdict()).isEqualTo(ModelApiCheck.Verdict.OK);
            CoordinatorRun run = new CoordinatorRun(settings, new PrintWriter(out, true), new PrintWriter(err, true),
                    false, "java -jar worker.jar")
                    .withRateGovernor(false, 0)
                    .withInProcessWorker(worker.handle())
                    .onListening(address -> {
                        throw new AssertionError("an in-process run listens nowhere, yet said " + address);
                    });

            assertThat(run.run()).as("exit; console:%n%s", err).isZero();
        }

        assertThat(err.toString()).doesNotContain("listening for workers").doesNotContain("start workers with");
        assertThat(out.toString()).contains("answers:     40 of 40 stored, 0 missing");
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(records::add);
        }
        assertThat(records).hasSize(40)
                .allSatisfy(r -> assertThat(r.workerId()).isEqualTo(ModelApiWorker.WORKER_ID));
        assertThat(stub.requestCount()).isEqualTo(40);
    }
}
