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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One bad worker never hurts the run, with the built {@code worker.jar} as real processes: a
 * coordinator, healthy workers and one broken worker, all over loopback TCP against stub model
 * APIs. Runs in surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(120)
class FaultIsolationIT {
    private static final String MODEL = DemoCommand.MODEL;
    private static final int VIGNETTES = 50;

    @TempDir
    Path dir;

    private final JarProcesses jars;

    FaultIsolationIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aRunWithTwoHealthyWorkersAndOneWhoseModelApiAnswers404CompletesStoringEveryVignetteOnce()
            throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(20), 32));
        Path db = dir.resolve("run.db");
        Process coordinator = startCoordinator(db);
        String address = jars.awaitListening(coordinator);

        // The broken worker first, alone: it used to fail every job of the run for good.
        String wrongApi = model.baseUrl().toString().replaceAll("/v1$", "/v2");
        startWorker(address, "gpu-07", wrongApi, "--no-model-check");
        jars.awaitOutput(coordinator, "worker gpu-07 quarantined");
        // Two healthy workers show what a third would (a fleet that shares the run around the
        // quarantined one), for one JVM less of the suite's CPU.
        for (int i = 1; i <= 2; i++) {
            startWorker(address, "gpu-0" + i, model.baseUrl().toString());
        }

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing")
                .contains("quarantined: worker gpu-07, 1 time; its last failure: worker gpu-07 at")
                .contains("answered HTTP 404 for model '" + MODEL + "'");
        assertStoredOnceBy(db, "gpu-01", "gpu-02");
    }

    @Test
    void aWorkerThatHeartbeatsButNeverAnswersDelaysTheRunByAboutTheJobTimeoutOnly() throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(20), 32));
        // Lists its model and accepts every call, then never answers one: wedged GPU, say.
        StubModelServer wedged = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMinutes(10), 8));
        Path db = dir.resolve("run.db");
        Process coordinator = startCoordinator(db, "--job-timeout", "2s");
        String address = jars.awaitListening(coordinator);

        Process stuck = startWorker(address, "stuck", wedged.baseUrl().toString());
        jars.awaitOutput(coordinator, "worker stuck registered");
        // One healthy worker: what is timed is the stuck one's cost, which a second healthy
        // worker would not change (it is another JVM of the suite's CPU).
        startWorker(address, "gpu-01", model.baseUrl().toString());

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing");
        Matcher took = Pattern.compile("Run complete in (\\d+\\.\\d) s").matcher(printed);
        assertThat(took.find()).isTrue();
        // The healthy worker alone takes about a second; the stuck one costs one or two 2 s deadlines
        // (each cancelled on it), never the 10 minutes its model would take.
        assertThat(Double.parseDouble(took.group(1))).as(printed).isLessThan(20.0);
        assertStoredOnceBy(db, "gpu-01");
        assertThat(stuck.isAlive()).as("the stuck worker is only slow, not dead").isTrue();
        assertThat(jars.log(stuck)).contains("cancelled by coordinator");
    }

    @Test
    void aWorkerWhoseApiHasNoPromptLogprobsRefusesMultipleChoiceJobsWhileACapableOneBesideItRunsThem()
            throws Exception {
        StubModelServer vllmLike = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        StubModelServer llamaLike = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(5), 32));
        llamaLike.servePromptLogprobs(false);
        Path db = dir.resolve("mc.db");
        Path suite = Path.of("..", "evals", "arithmetic-mc.jsonl").toAbsolutePath().normalize();
        Process coordinator = jars.start("coordinator", "--suite", suite.toString(), "--model", MODEL, "--db",
                db.toString(), "--listen", "127.0.0.1:0", "--job-size", "4", "--heartbeat-interval", "1s",
                "--wait-for-workers", "2m");
        String address = jars.awaitListening(coordinator);

        // The incapable worker first, alone: it must refuse, never store an answer at chance.
        Process llama = startWorker(address, "llama", llamaLike.baseUrl().toString());
        jars.awaitOutput(coordinator, "worker llama quarantined");
        startWorker(address, "vllm", vllmLike.baseUrl().toString());

        jars.assertExitCode(coordinator, 0);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("answers:     40 of 40 stored, 0 missing")
                .contains("does not return prompt log-probabilities").contains("acc_norm");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).hasSize(40).extracting(StoredRecord::workerId).containsOnly("vllm");
        }
        assertThat(llama.isAlive()).as("refusing these jobs is not a reason to exit").isTrue();
    }

    private Process startCoordinator(Path db, String... extra) throws IOException {
        Path suite = dir.resolve("math.jsonl");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < VIGNETTES; i++) {
            lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\"}\n");
        }
        Files.writeString(suite, lines);
        List<String> args = new ArrayList<>(List.of("coordinator", "--suite", suite.toString(), "--model", MODEL, "--db",
                db.toString(), "--listen", "127.0.0.1:0", "--job-size", "4", "--heartbeat-interval", "1s",
                "--wait-for-workers", "2m"));
        args.addAll(List.of(extra));
        return jars.start(args.toArray(String[]::new));
    }

    private Process startWorker(String coordinator, String id, String modelApi, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("--coordinator", coordinator, "--model-api", modelApi,
                "--model", MODEL, "--id", id, "--capacity", "2", "--heartbeat", "1s"));
        args.addAll(List.of(extra));
        return jars.start(args.toArray(String[]::new));
    }

    private static void assertStoredOnceBy(Path db, String... workers) {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(records::add);
        }
        Set<String> vignettes = new HashSet<>();
        records.forEach(r -> vignettes.add(r.record().vignetteId()));
        assertThat(records).hasSize(VIGNETTES);
        assertThat(vignettes).hasSize(VIGNETTES);
        assertThat(records).extracting(StoredRecord::workerId).isSubsetOf(List.of(workers));
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

}
