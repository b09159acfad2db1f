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
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shipped agent suite through a coordinator and workers as real processes, against the stub
 * model playing the agent: a worker killed with {@code kill -9} in the middle of a trajectory
 * (its sample's sandbox open, the tool loop between turns) costs the run nothing but the redo
 * of that sample on the other worker, and every sample (vignette and epoch) is stored exactly
 * once; a worker that cannot build a sandbox (no bubblewrap on its PATH) is quarantined as at
 * fault while the other runs the samples. Runs in surefire's test JVMs,
 * worker.jar being built before the test phase.
 */
@Timeout(120)
class AgentFleetIT {
    private static final String MODEL = StubModelServer.MODEL;
    private static final Path AGENT = Path.of("..", "evals", "agent.jsonl").toAbsolutePath().normalize();
    private static final int TASKS = 8;
    private static final int EPOCHS = 2;

    @TempDir
    Path dir;

    private final JarProcesses jars;

    AgentFleetIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aWorkerKilledMidTrajectoryHasItsSampleRedoneElsewhereAndEverySampleIsStoredOnce() throws Exception {
        // Each worker has its own model API, so that the test sees which worker is between turns.
        // The doomed worker's answers take long enough that no trajectory of it can finish (each
        // task takes at least three turns) before the kill.
        StubModelServer slow = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(500), 8));
        StubModelServer fast = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(1), 8));
        Path db = dir.resolve("agent.db");
        Process coordinator = startCoordinator(db, EPOCHS);
        String address = jars.awaitListening(coordinator);

        Process doomed = startWorker(address, "doomed", slow, Map.of(), 2);
        // Its first model turn is answered: its sample's sandbox is open and the loop is under way.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                .until(() -> slow.requestCount() >= 1 || !doomed.isAlive());
        assertThat(doomed.isAlive()).as("the doomed worker runs; its output:%n%s", jars.log(doomed)).isTrue();
        long turnsBeforeKill = slow.requestCount();
        doomed.destroyForcibly(); // kill -9: no goodbye to the coordinator, no sandbox closed by it
        assertThat(doomed.waitFor(30, TimeUnit.SECONDS)).isTrue();
        startWorker(address, "healthy", fast, Map.of(), 4);

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        // Each of its (at most two) samples needs three answered turns or more to end.
        assertThat(turnsBeforeKill).as("killed before a trajectory of it could end").isLessThan(3);
        assertThat(printed).contains("Run complete")
                .contains("answers:     " + TASKS * EPOCHS + " of " + TASKS * EPOCHS + " stored, 0 missing")
                .containsPattern("redelivered: [1-9]\\d* jobs?;")
                .contains("accuracy (check and numeric, scoring 1)").contains(MODEL + ": 1.000 (95% CI")
                // A sample's latency is its whole run (sandbox, turns, tools), not one model call.
                .containsPattern("latency:     p50 \\d+ ms, p95 \\d+ ms per answer\n")
                .containsPattern(MODEL + ": pass@1 1\\.000 \\(95% CI [0-9.]+-1\\.000\\), pass@2 1\\.000 \\(95% CI"
                        + " [0-9.]+-1\\.000\\), " + TASKS + " problems");
        List<StoredRecord> records = records(db);
        assertStoredOnce(records, EPOCHS);
        // Everything the killed worker had begun was redone by the other: nothing of it was stored.
        assertThat(records).extracting(StoredRecord::workerId).containsOnly("healthy");
        // The healthy worker's model saw every task's trajectory: a first turn for each sample.
        assertThat(fast.requestCount()).isGreaterThanOrEqualTo(TASKS * EPOCHS * 2L);
    }

    @Test
    void aWorkerThatCannotBuildASandboxIsQuarantinedWhileTheOtherRunsTheSamples() throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(1), 16));
        Path db = dir.resolve("agent.db");
        // One epoch: a sandbox failure trips the quarantine on the bare worker's first job, and
        // every sample is still run by the other; a second epoch would only redo the same work.
        Process coordinator = startCoordinator(db, 1);
        String address = jars.awaitListening(coordinator);

        // No bubblewrap on its PATH: it says so at start, registers, and fails closed.
        Process bare = startWorker(address, "bare", model, Map.of("PATH", "/nonexistent"), 2);
        jars.awaitOutput(coordinator, "worker bare quarantined");
        startWorker(address, "healthy", model, Map.of(), 4);

        jars.assertExitCode(coordinator, 0);
        assertThat(jars.log(bare)).contains("worker=bare - cannot run sandboxes, so runs no sandboxed command:"
                + " bubblewrap (bwrap) is not installed or not on PATH")
                .contains("this worker's own failure: check its settings (its model API, its sandboxes)")
                .doesNotContain("check its model API settings");
        assertThat(model.requestCount()).as("model turns").isGreaterThanOrEqualTo(TASKS * 2L);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete")
                .contains("answers:     " + TASKS + " of " + TASKS + " stored, 0 missing")
                .contains("quarantined: worker bare, 1 time; its last failure: worker bare at")
                .contains("runs in a sandbox and this worker runs none")
                .contains(MODEL + ": 1.000 (95% CI");
        List<StoredRecord> records = records(db);
        assertStoredOnce(records, 1);
        assertThat(records).extracting(StoredRecord::workerId).containsOnly("healthy");
        assertThat(bare.isAlive()).as("a worker without sandboxes is not dead: it may take other jobs").isTrue();
    }

    private Process startCoordinator(Path db, int epochs) throws IOException {
        return jars.start("coordinator", "--suite", AGENT.toString(), "--model", MODEL, "--db", db.toString(),
                "--epochs", String.valueOf(epochs), "--listen", "127.0.0.1:0", "--job-size", "1",
                "--heartbeat-interval", "1s", "--wait-for-workers", "1m");
    }

    /**
     * A worker taking {@code capacity} jobs (of one sample each) at once, each in a sandbox of its
     * own. The healthy worker, which runs every sample, takes four: what is checked does not
     * depend on it, and the run ends sooner. The doomed worker takes two, so that no trajectory of
     * it can end before the kill.
     */
    private Process startWorker(String coordinator, String id, StubModelServer model, Map<String, String> env,
                                int capacity) throws IOException {
        return jars.start(env, "--coordinator", coordinator, "--model-api", model.baseUrl().toString(), "--model",
                MODEL, "--id", id, "--capacity", String.valueOf(capacity), "--sandboxes", String.valueOf(capacity),
                "--heartbeat", "1s");
    }

    private static List<StoredRecord> records(Path db) {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(records::add);
        }
        return records;
    }

    /** One stored answer per task and epoch (of {@code epochs}), none missing, none twice. */
    private static void assertStoredOnce(List<StoredRecord> records, int epochs) {
        Map<String, Long> perSample = records.stream().collect(Collectors.groupingBy(
                r -> r.record().vignetteId() + " epoch " + r.context().epoch(), TreeMap::new, Collectors.counting()));
        assertThat(perSample).hasSize(TASKS * epochs).allSatisfy((sample, n) -> assertThat(n).as(sample).isOne());
        assertThat(records).hasSize(TASKS * epochs).allSatisfy(r -> assertThat(r.record().isFailed()).isFalse());
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }
}
