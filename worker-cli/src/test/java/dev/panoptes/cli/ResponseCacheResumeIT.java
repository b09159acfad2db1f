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
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The response cache with the built {@code worker.jar} as real processes and the stub model API
 * counting its calls: a second run of the same requests, served half from the cache, is killed
 * with {@code kill -9} mid-run and resumed, and every answer is stored once, the cached half never
 * asked of the model. Runs in surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(120)
class ResponseCacheResumeIT {
    private static final String MODEL = StubModelServer.MODEL;

    @TempDir
    Path dir;

    private final JarProcesses jars;
    private final StubModelServer model;

    ResponseCacheResumeIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
        model = jars.closeLater(StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(40), 4));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aRunServedHalfFromTheCacheKilledMidRunAndResumedStoresEachAnswerOnceAskingOnlyTheOtherHalf()
            throws Exception {
        String db = dir.resolve("math.db").toString();
        Process first = coordinator(suite("first.jsonl", 40), db, "first");
        worker(jars.awaitListening(first), "w1");
        jars.assertExitCode(first, 0);
        assertThat(model.requestCount()).isEqualTo(40);

        // q0..q39 are answered in the database; q40..q79 are not.
        Path second = suite("second.jsonl", 80);
        Process killed = coordinator(second, db, "second");
        worker(jars.awaitListening(killed), "w2");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                .until(() -> storedRecords(db) >= 40 + 40 + 8);
        killed.destroyForcibly(); // kill -9: nothing is flushed, no hook runs
        assertThat(killed.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(jars.log(killed)).contains("response cache: 40 answers served from the database (1 source run)"
                + " without a model call; 40 of 80 left to ask");

        Process resumed = coordinator(second, db, "second");
        worker(jars.awaitListening(resumed), "w3");
        jars.assertExitCode(resumed, 0);

        assertThat(jars.log(resumed)).contains("80 of 80 stored, 0 missing")
                .contains("cache hits:  40 answers served from the database without a model call");
        List<StoredRecord> records = new ArrayList<>();
        String firstRun;
        try (JdbcResultStore store = JdbcResultStore.openSqlite(Path.of(db))) {
            store.forEachRecord(records::add);
            firstRun = store.runs().get(1).runId();
        }
        assertThat(records).hasSize(120);
        List<StoredRecord> secondRun = records.stream().filter(r -> !r.context().runId().equals(firstRun)).toList();
        assertThat(secondRun).hasSize(80).extracting(r -> r.record().vignetteId()).doesNotHaveDuplicates();
        assertThat(secondRun).filteredOn(StoredRecord::cached).hasSize(40).allSatisfy(r -> {
            assertThat(r.cachedFrom()).isEqualTo(firstRun);
            assertThat(Integer.parseInt(r.record().vignetteId().substring(1))).isLessThan(40);
        });
        // The second run asked the model for q40..q79 only, and again for at most the jobs in flight
        // when it was killed (capacity 1, so one job of 4, and one answered but not yet stored).
        assertThat(model.requestCount() - 40).isBetween(40L, 48L);
    }

    private long storedRecords(String db) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_records")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private Path suite(String name, int vignettes) throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < vignettes; i++) {
            lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\",")
                    .append("\"expected\":\"").append(i + 1).append("\"}\n");
        }
        return Files.writeString(dir.resolve(name), lines);
    }

    private Process coordinator(Path suite, String db, String label) throws IOException {
        return jars.start("coordinator", "--suite", suite.toString(), "--model", MODEL, "--model-id", "stub", "--temperature", "0",
                "--db", db, "--run-label", label, "--listen", "127.0.0.1:0", "--job-size", "4",
                "--heartbeat-interval", "1s", "--wait-for-workers", "1m");
    }

    private void worker(String coordinator, String id) throws IOException {
        jars.start("--coordinator", coordinator, "--model-api", model.baseUrl().toString(), "--model", MODEL,
                "--id", id, "--capacity", "1", "--heartbeat", "1s");
    }
}
