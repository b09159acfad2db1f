package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code coordinator --task FILE.yaml} with two workers, the built {@code worker.jar} as real
 * processes over loopback against stub model APIs: the shipped lm-eval task runs across the
 * fleet and the summary gives acc and acc_norm with their intervals; the shipped group file runs
 * as one run with each task's figures. Runs in surefire's
 * test JVMs, worker.jar being built before the test phase.
 */
@Timeout(120)
class TaskFileRunIT {
    private static final String MODEL = DemoCommand.MODEL;

    @TempDir
    Path dir;

    private final JarProcesses jars;

    TaskFileRunIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void theShippedTaskRunsAcrossTwoWorkersWithAccAndAccNorm() throws Exception {
        StubModelServer one = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        StubModelServer two = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        Path db = dir.resolve("task.db");
        Path task = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();
        Process coordinator = jars.start("coordinator", "--task", task.toString(), "--model", MODEL, "--db",
                db.toString(), "--listen", "127.0.0.1:0", "--job-size", "4", "--heartbeat-interval", "1s",
                "--wait-for-workers", "2m");
        String address = jars.awaitListening(coordinator);
        startWorker(address, "w1", one.baseUrl().toString());
        startWorker(address, "w2", two.baseUrl().toString());

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("answers:     40 of 40 stored, 0 missing")
                .contains("accuracy (acc, scoring 1)").containsPattern("acc_norm .*\\n\\s+" + MODEL
                        + ": 0\\.\\d+ \\(95% CI ");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).hasSize(40);
            assertThat(records).allSatisfy(r -> assertThat(r.record().response()).startsWith("{\"resps\":"));
        }
    }

    @Test
    void theShippedGroupRunsAcrossTwoWorkersAsOneRunWithPerTaskFigures() throws Exception {
        StubModelServer one = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        StubModelServer two = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        Path db = dir.resolve("group.db");
        Path group = Path.of("..", "evals", "basic-skills-group.yaml").toAbsolutePath().normalize();
        Process coordinator = jars.start("coordinator", "--task", group.toString(), "--model", MODEL, "--db",
                db.toString(), "--listen", "127.0.0.1:0", "--job-size", "4", "--heartbeat-interval", "1s",
                "--wait-for-workers", "2m");
        String address = jars.awaitListening(coordinator);
        startWorker(address, "w1", one.baseUrl().toString());
        startWorker(address, "w2", two.baseUrl().toString());

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("answers:     64 of 64 stored, 0 missing")
                .containsPattern("task=arithmetic_mc: 0\\.\\d+ \\(95% CI [^\\n]*n=40\\)")
                .containsPattern("task=units_mc: [01]\\.\\d+ \\(95% CI [^\\n]*n=24\\)")
                .contains("mean of the 2 task groups, each counted once");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isEqualTo(64);
        }
    }

    private Process startWorker(String coordinator, String id, String modelApi) throws IOException {
        return jars.start("--coordinator", coordinator, "--model-api", modelApi, "--model", MODEL, "--id", id,
                "--capacity", "2", "--heartbeat", "1s");
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }
}
