package dev.panoptes.worker;

import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;
import dev.panoptes.remote.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The worker's side of TLS: sessions over TLS, mutual TLS, and what a failed handshake looks like. */
class TlsWorkerTest {
    private static final TestCertificates CERTS = TestCertificates.create();

    private final SharedPool pool = new SharedPool();
    private final List<String> rejected = new CopyOnWriteArrayList<>();
    private WorkerServer server;
    private WorkerLoop loop;
    private Thread loopThread;

    @AfterEach
    void stop() throws InterruptedException {
        if (loop != null) {
            loop.close();
            loopThread.join(5000);
        }
        if (server != null) {
            server.close();
        }
    }

    private InetSocketAddress serve(SSLContext context, boolean mutual) throws IOException {
        server = WorkerServer.start(ServerOptions.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .heartbeatInterval(Duration.ofMillis(500)).tls(context, mutual).build(), pool,
                new WorkerServer.Listener() {
                    @Override
                    public void onRejected(SocketAddress remote, String reason) {
                        rejected.add(reason);
                    }
                });
        return server.address();
    }

    private void runLoop(InetSocketAddress address, String host, SSLContext tls) {
        loop = new WorkerLoop(new InetSocketAddress(host, address.getPort()), "w-tls", 4, TestJobs.asyncEchoRunner(),
                WorkerOptions.defaults().withBackoff(Duration.ofMillis(50), Duration.ofMillis(100)).withTls(tls));
        loopThread = new Thread(() -> {
            try {
                loop.runForever();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "tls-worker-loop");
        loopThread.start();
    }

    private RemoteWorker awaitWorker() {
        return (RemoteWorker) await().atMost(Duration.ofSeconds(10)).until(() -> pool.snapshot().stream()
                .findFirst().orElse(null), w -> w != null);
    }

    @Test
    void aWorkerServesJobsOverTlsAndMutualTls() throws Exception {
        InetSocketAddress address = serve(TestCertificates.serverContext(CERTS.server, CERTS.ca), true);
        runLoop(address, "localhost", TestCertificates.clientContext(CERTS.ca, CERTS.client));

        WorkerHandle worker = awaitWorker();
        for (var job : TestJobs.jobs("tls", 100)) {
            JobOutcome outcome = worker.dispatch(job).get(10, TimeUnit.SECONDS);
            assertThat(outcome.jobId()).isEqualTo(job.id());
        }
        assertThat(rejected).isEmpty();
    }

    @Test
    void aWorkerThatDoesNotTrustTheCoordinatorFailsWithTheReasonAndWhatToCheck() throws Exception {
        InetSocketAddress address = serve(TestCertificates.serverContext(CERTS.server, null), false);

        assertThatThrownBy(() -> Workers.serveWorker(address, "w-bad", 1, TestJobs.asyncEchoRunner(),
                WorkerOptions.defaults().withTls(TestCertificates.clientContext(CERTS.foreignCa, null))))
                .isInstanceOf(TlsHandshakeException.class)
                .hasMessageStartingWith("TLS handshake with coordinator 127.0.0.1:" + address.getPort() + " failed: ")
                .hasMessageContaining("unable to find valid certification path")
                .hasMessageEndingWith("; check --tls-ca / the coordinator's certificate");
    }

    @Test
    void aCoordinatorCertificateForAnotherHostIsRefusedByTheWorker() throws Exception {
        InetSocketAddress address = serve(TestCertificates.serverContext(CERTS.wrongHostServer, null), false);

        assertThatThrownBy(() -> Workers.serveWorker(new InetSocketAddress("localhost", address.getPort()), "w-host",
                1, TestJobs.asyncEchoRunner(), WorkerOptions.defaults().withTls(
                        TestCertificates.clientContext(CERTS.ca, null))))
                .isInstanceOf(TlsHandshakeException.class)
                .hasMessageContaining("localhost");
    }

    @Test
    void aWorkerWithoutTheClientCertificateAMutualTlsCoordinatorRequiresIsTold() throws Exception {
        InetSocketAddress address = serve(TestCertificates.serverContext(CERTS.server, CERTS.ca), true);

        assertThatThrownBy(() -> Workers.serveWorker(address, "w-nocert", 1, TestJobs.asyncEchoRunner(),
                WorkerOptions.defaults().withTls(TestCertificates.clientContext(CERTS.ca, null))))
                .isInstanceOf(IOException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> rejected.size() == 1);
        assertThat(rejected.get(0)).startsWith("TLS handshake failed: ");
    }

    @Test
    void aWorkerRefusedByTlsKeepsRetryingWithItsBackoff() throws Exception {
        InetSocketAddress address = serve(TestCertificates.serverContext(CERTS.server, null), false);
        runLoop(address, "127.0.0.1", TestCertificates.clientContext(CERTS.foreignCa, null));

        await().atMost(Duration.ofSeconds(10)).until(() -> rejected.size() >= 3);
        assertThat(loopThread.isAlive()).as("the loop retries rather than exit").isTrue();
        assertThat(pool.snapshot()).isEmpty();
    }
}
