package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.coordinator.CoordinatorRun;
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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The vignette is the unit of failure, with the built {@code worker.jar} as real processes: a
 * vignette the model API refuses for what it holds is stored as a failed answer and its
 * neighbours are answered. Runs in surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(120)
class VignetteFailureIT {
    private static final String MODEL = DemoCommand.MODEL;

    @TempDir
    Path dir;

    private final JarProcesses jars;

    VignetteFailureIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aPromptPastTheContextLengthIsAFailedAnswerItsJobCompletesAndMaxErrorRateDecidesTheExit() throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ZERO, 8));
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            String prompt = i == 3 ? "word ".repeat(StubModelServer.CONTEXT_TOKENS + 100) + "What is 3 + 1?"
                    : "What is " + i + " + 1?";
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"").append(prompt)
                    .append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("long.jsonl"), lines);
        Path db = dir.resolve("run.db");

        Process coordinator = jars.start(coordinatorArgs(suite, db));
        String address = jars.awaitListening(coordinator);
        startWorker(address, "gpu-01", model);

        jars.assertExitCode(coordinator, CoordinatorRun.EXIT_ERROR_RATE);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("Run complete").contains("jobs:        2 of 2 complete")
                .contains("answers:     16 of 16 stored (1 of them a failed answer, below), 0 missing")
                .contains("error rate:  1 failed answer of 16 answers stored (6.3 %) is more than --max-error-rate 0"
                        + " allows: exit 5")
                .contains("failed answers: 1 of 16 for " + MODEL + " (v3: HTTP 400: This model's maximum context"
                        + " length is " + StubModelServer.CONTEXT_TOKENS + " tokens.")
                .doesNotContain("failed permanently");
        List<StoredRecord> records = records(db);
        assertThat(records).hasSize(16);
        assertThat(records).filteredOn(r -> r.record().isFailed()).singleElement().satisfies(r -> {
            assertThat(r.record().vignetteId()).isEqualTo("v3");
            assertThat(r.record().error()).contains("HTTP 400").contains("code context_length_exceeded")
                    .contains(model.baseUrl() + "/chat/completions");
        });
        assertThat(records).filteredOn(r -> !r.record().isFailed()).hasSize(15)
                .allSatisfy(r -> assertThat(r.record().response()).isNotEmpty());
        assertThat(model.refusedCount()).isEqualTo(1);

        // The same command, allowing a tenth of the answers to fail: it resumes, sends nothing
        // (the failed answer is stored: the same request would fail again) and exits 0.
        List<String> tolerant = new ArrayList<>(List.of(coordinatorArgs(suite, db)));
        tolerant.addAll(List.of("--max-error-rate", "0.1"));
        Process again = jars.start(tolerant.toArray(String[]::new));
        jars.assertExitCode(again, 0);
        assertThat(jars.log(again)).contains("jobs:        2 of 2 complete (2 from an earlier run)")
                .contains("failed answers: 1 of 16 for " + MODEL);
        assertThat(model.refusedCount()).isEqualTo(1);
        assertThat(records(db)).hasSize(16);
    }

    @Test
    void aVignetteTooBigForTheFrameLimitIsReportedWithItsLineBeforeAnythingRunsAndFailsAlone() throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ZERO, 8));
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            String prompt = i == 2 ? "x".repeat(17_000_000) : "What is " + i + " + 1?";
            lines.append("{\"id\":\"v").append(i).append("\",\"prompt\":\"").append(prompt)
                    .append("\",\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Path suite = Files.writeString(dir.resolve("big.jsonl"), lines);
        Path db = dir.resolve("run.db");

        Process coordinator = jars.start(coordinatorArgs(suite, db));
        String address = jars.awaitListening(coordinator);
        String before = jars.log(coordinator);
        // Named with its line, and what to do, before the coordinator even listens.
        assertThat(before.indexOf("line 3: job ")).as(before).isNotNegative()
                .isLessThan(before.indexOf("listening for workers on"));
        assertThat(before).contains("vignette 'v2' takes 17000").contains("more than the frame limit of 16777216"
                + " bytes; it is not sent").contains("raise --max-frame-bytes on both sides");
        startWorker(address, "gpu-01", model);

        jars.assertExitCode(coordinator, CoordinatorRun.EXIT_INCOMPLETE);
        String printed = jars.log(coordinator);
        assertThat(printed).contains("answers:     5 of 6 stored, 1 missing").contains("failed jobs:")
                .doesNotContain("StreamReadConstraints").doesNotContain("assign frame of");
        assertThat(records(db)).extracting(r -> r.record().vignetteId())
                .containsExactlyInAnyOrder("v0", "v1", "v3", "v4", "v5");
    }

    private static String[] coordinatorArgs(Path suite, Path db) {
        return new String[] {"coordinator", "--suite", suite.toString(), "--model", MODEL, "--db", db.toString(),
            "--listen", "127.0.0.1:0", "--job-size", "8", "--heartbeat-interval", "1s", "--wait-for-workers", "1m"};
    }

    private Process startWorker(String coordinator, String id, StubModelServer model, String... extra)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("--coordinator", coordinator, "--model-api",
                model.baseUrl().toString(), "--model", MODEL, "--id", id, "--capacity", "2", "--heartbeat", "1s"));
        args.addAll(List.of(extra));
        return jars.start(args.toArray(String[]::new));
    }

    private static List<StoredRecord> records(Path db) {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(records::add);
        }
        return records;
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }
}
