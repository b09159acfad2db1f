package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.remote.tls.TestCertificates;
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
 * The worker protocol over TLS with the built {@code worker.jar} as real processes: a coordinator
 * serving TLS, two workers that trust its CA and one that trusts another CA. The one is refused
 * with a line that says why and what to check; the other two complete the run.
 */
@Timeout(120)
class TlsRunIT {
    private static final String MODEL = DemoCommand.MODEL;
    private static final int VIGNETTES = 24;

    @TempDir
    Path dir;

    private final JarProcesses jars;

    TlsRunIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aTlsRunCompletesOnTheWorkersThatTrustTheCoordinatorWhileOneWithAnotherCaIsRefusedSayingWhy()
            throws Exception {
        TestCertificates certs = TestCertificates.create();
        Path serverCert = TestCertificates.writePem(dir, "coordinator", certs.server);
        Path ca = TestCertificates.writePem(dir, "ca", certs.ca);
        Path otherCa = TestCertificates.writePem(dir, "other-ca", certs.foreignCa);
        StubModelServer model = jars.closeLater(StubModelServer.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ofMillis(10), 32));
        Path db = dir.resolve("run.db");
        Process coordinator = startCoordinator(db, "--tls-cert", serverCert.toString(), "--tls-key",
                dir.resolve("coordinator.key").toString());
        String address = jars.awaitListening(coordinator);
        jars.awaitOutput(coordinator, "--tls --tls-ca");

        Process refused = startWorker(address, "wrong-ca", model.baseUrl().toString(), "--tls", "--tls-ca",
                otherCa.toString());
        jars.awaitOutput(refused, "TLS handshake with coordinator " + address + " failed: ");
        // A worker without --tls: told once what to do, from the first bytes it reads, and it stops.
        Process plaintext = startWorker(address, "no-tls", model.baseUrl().toString());
        jars.assertExitCode(plaintext, WorkerMain.EXIT_REJECTED);
        assertThat(JarProcesses.occurrences(jars.log(plaintext), "the coordinator at " + address + " speaks TLS:"
                + " start the worker with --tls (and --tls-ca FILE")).as(jars.log(plaintext)).isEqualTo(1);
        assertThat(jars.log(plaintext)).doesNotContain("frame length").doesNotContain("reconnecting");
        jars.awaitOutput(coordinator, "the peer sent plaintext, not TLS: a worker started without --tls");
        startWorker(address, "tls-1", model.baseUrl().toString(), "--tls", "--tls-ca", ca.toString());
        startWorker(address, "tls-2", model.baseUrl().toString(), "--tls-ca", ca.toString());

        jars.assertExitCode(coordinator, 0);
        assertThat(jars.log(coordinator)).contains("Run complete")
                .contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing");
        assertThat(jars.log(refused)).contains("check --tls-ca / the coordinator's certificate")
                .contains("unable to find valid certification path").contains("reconnecting in");
        assertThat(refused.isAlive()).as("a worker refused by TLS keeps retrying with its backoff").isTrue();
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(records::add);
        }
        assertThat(records).hasSize(VIGNETTES);
        assertThat(records).extracting(StoredRecord::workerId).isSubsetOf(List.of("tls-1", "tls-2"));
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
}
