package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.remote.tls.TestCertificates;
import dev.panoptes.remote.tls.TestCertificates.Issued;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The worker protocol over TLS, on real loopback sockets: jobs flow, frames cross record
 * boundaries, every kind of handshake failure closes only its own connection with a reason that
 * names it, a peer silent mid-handshake stalls nobody, and mutual TLS with and without a token.
 */
class TlsConnectionTest {
    private static final TestCertificates CERTS = TestCertificates.create();

    private TestCoordinator coordinator;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private TestCoordinator start(Issued serverCert, boolean mutual, UnaryOperator<ServerOptions.Builder> tweak)
            throws IOException {
        coordinator = TestCoordinator.start(b -> tweak.apply(
                b.tls(TestCertificates.serverContext(serverCert, mutual ? CERTS.ca : null), mutual)));
        return coordinator;
    }

    private FakeWorker tlsWorker(SSLContext context, Message.Register register) throws IOException {
        FakeWorker f = FakeWorker.registerTls(coordinator.address(), context, register);
        toClose.add(f);
        return f;
    }

    private static SSLContext trusting(Issued ca) {
        return TestCertificates.clientContext(ca, null);
    }

    private static JobOutcome outcomeOf(CompletableFuture<JobOutcome> future) {
        return future.orTimeout(10, TimeUnit.SECONDS).join();
    }

    @Test
    void jobsFlowOverTlsBetweenTheCoordinatorAndAWorker() throws IOException {
        start(CERTS.server, false, b -> b);
        tlsWorker(trusting(CERTS.ca), new Message.Register("w1", 4)).serve(FakeWorker.ECHO);
        RemoteWorker worker = coordinator.awaitWorker("w1");

        List<CompletableFuture<JobOutcome>> futures = new ArrayList<>();
        for (Job job : TestJobs.jobs("tls", 50)) {
            futures.add(worker.dispatch(job));
        }

        for (int i = 0; i < futures.size(); i++) {
            assertThat(outcomeOf(futures.get(i)).jobId().value()).isEqualTo(TestJobs.jobs("tls", 50).get(i).id().value());
        }
        assertThat(coordinator.rejected).isEmpty();
    }

    @Test
    void aFrameLargerThanATlsRecordAndFramesSplitAcrossRecordsArriveWhole() throws IOException {
        start(CERTS.server, false, b -> b);
        FakeWorker fake = FakeWorker.connectTls(coordinator.address(), trusting(CERTS.ca));
        toClose.add(fake);
        // Each byte of the register frame in a TLS record of its own.
        fake.dribble(new MessageCodec().encodeFrame(new Message.Register("w-split", 2)));
        RemoteWorker worker = coordinator.awaitWorker("w-split");

        // A 40 KB prompt: its assign and its result each span three records (16 KiB of plaintext each).
        String big = "x".repeat(40_000);
        CompletableFuture<JobOutcome> first = worker.dispatch(TestJobs.job("big", big));
        CompletableFuture<JobOutcome> second = worker.dispatch(TestJobs.job("small", "hi"));
        Job a = fake.nextAssign();
        Job b = fake.nextAssign();
        // Both results in one write: one record holding two frames... and a third frame dribbled.
        ByteArrayOutputStream both = new ByteArrayOutputStream();
        MessageCodec codec = new MessageCodec();
        both.writeBytes(codec.encodeFrame(new Message.Result(TestJobs.echo(a))));
        byte[] heartbeat = codec.encodeFrame(new Message.Heartbeat("w-split"));
        both.write(heartbeat, 0, 3);
        fake.sendRaw(both.toByteArray());
        fake.dribble(java.util.Arrays.copyOfRange(heartbeat, 3, heartbeat.length));
        fake.sendRaw(codec.encodeFrame(new Message.Result(TestJobs.echo(b))));

        assertThat(outcomeOf(first).records().get(0).response()).endsWith("x");
        assertThat(outcomeOf(second).jobId().value()).isEqualTo("small");
    }

    @Test
    void aWorkerThatDoesNotTrustTheCoordinatorsCaIsClosedAndTheReasonNamed() throws IOException {
        start(CERTS.server, false, b -> b);

        assertThatThrownBy(() -> tlsWorker(trusting(CERTS.foreignCa), new Message.Register("w-foreign", 1)))
                .isInstanceOf(SSLHandshakeException.class)
                .hasMessageContaining("PKIX");

        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).startsWith("TLS handshake failed: ").contains("certificate_unknown");
        assertThat(coordinator.pool.snapshot()).isEmpty();
    }

    @Test
    void anExpiredCoordinatorCertificateFailsTheHandshake() throws IOException {
        start(CERTS.expiredServer, false, b -> b);

        assertThatThrownBy(() -> tlsWorker(trusting(CERTS.ca), new Message.Register("w1", 1)))
                .isInstanceOf(SSLHandshakeException.class)
                .satisfies(e -> assertThat(causes(e)).contains("validity check failed").contains("NotAfter"));
        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).startsWith("TLS handshake failed: ");
    }

    @Test
    void aCoordinatorCertificateForAnotherHostFailsTheHandshake() throws IOException {
        start(CERTS.wrongHostServer, false, b -> b);

        assertThatThrownBy(() -> tlsWorker(trusting(CERTS.ca), new Message.Register("w1", 1)))
                .isInstanceOf(SSLHandshakeException.class)
                .satisfies(e -> assertThat(causes(e)).contains("127.0.0.1"));
        eventually().until(() -> coordinator.rejected.size() == 1);
    }

    @Test
    void aPlaintextWorkerTalkingToATlsCoordinatorIsClosedWithoutAnswer() throws IOException {
        start(CERTS.server, false, b -> b);
        FakeWorker plain = FakeWorker.register(coordinator.address(), "w-plain", 1);
        toClose.add(plain);

        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).startsWith("TLS handshake failed: ")
                .contains("the peer sent plaintext, not TLS: a worker started without --tls");
        // No rejected frame in plaintext: nothing but (perhaps) a TLS alert, then the end.
        byte[] answer = plain.socket().getInputStream().readAllBytes();
        assertThat(new String(answer, java.nio.charset.StandardCharsets.ISO_8859_1)).doesNotContain("rejected");
    }

    @Test
    void aTlsWorkerTalkingToAPlaintextCoordinatorIsToldApartFromGarbage() throws IOException {
        coordinator = TestCoordinator.start(b -> b);
        Socket tlsPeer = new Socket("127.0.0.1", coordinator.address().getPort());
        toClose.add(tlsPeer);
        tlsPeer.getOutputStream().write(TestCertificates.clientHello(trusting(CERTS.ca)));
        tlsPeer.getOutputStream().flush();

        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).isEqualTo("the peer speaks TLS but this coordinator serves plaintext:"
                + " start the coordinator with --tls-cert and --tls-key, or the worker without --tls");
        assertThat(tlsPeer.getInputStream().readAllBytes()).as("no plaintext frame for a TLS client").isEmpty();
    }

    @Test
    void aPeerSilentInTheMiddleOfItsHandshakeStallsNoOtherConnectionAndIsClosedAtTheHandshakeTimeout()
            throws Exception {
        start(CERTS.server, false, b -> b.selectorThreads(1).handshakeTimeout(Duration.ofMillis(1500)));
        // A real ClientHello, then silence.
        Socket silent = new Socket("127.0.0.1", coordinator.address().getPort());
        toClose.add(silent);
        silent.getOutputStream().write(TestCertificates.clientHello(trusting(CERTS.ca)));
        silent.getOutputStream().flush();
        long startNanos = System.nanoTime();

        FakeWorker worker = tlsWorker(trusting(CERTS.ca), new Message.Register("w-busy", 8));
        worker.serve(FakeWorker.ECHO);
        RemoteWorker remote = coordinator.awaitWorker("w-busy");
        List<CompletableFuture<JobOutcome>> futures = new ArrayList<>();
        for (Job job : TestJobs.jobs("busy", 200)) {
            futures.add(remote.dispatch(job));
        }
        futures.forEach(TlsConnectionTest::outcomeOf);

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos))
                .as("200 jobs on the same loop, while the silent handshake is pending").isLessThan(1500);
        assertThat(coordinator.rejected).isEmpty();
        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).contains("no TLS handshake completed within the handshake timeout");
        // It got the coordinator's first flight, then the end of the stream.
        assertThat(silent.getInputStream().readAllBytes()).isNotEmpty();
        assertThat(coordinator.pool.snapshot()).hasSize(1);
    }

    @Test
    void withMutualTlsAndNoTokenAVerifiedClientCertificateIsEnoughToRegister() throws IOException {
        start(CERTS.server, true, b -> b);
        tlsWorker(TestCertificates.clientContext(CERTS.ca, CERTS.client), new Message.Register("w-mtls", 2))
                .serve(FakeWorker.ECHO);
        RemoteWorker worker = coordinator.awaitWorker("w-mtls");

        assertThat(outcomeOf(worker.dispatch(TestJobs.job("m1", "hi"))).jobId().value()).isEqualTo("m1");
    }

    @Test
    void withMutualTlsAWorkerWithoutACertificateOrWithOneFromAnotherCaIsRefused() throws IOException {
        start(CERTS.server, true, b -> b);

        assertThatThrownBy(() -> {
            FakeWorker f = tlsWorker(trusting(CERTS.ca), new Message.Register("w-nocert", 1));
            // TLS 1.3: the client may finish before the server checks; the refusal arrives as it reads.
            f.recv();
        }).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> {
            FakeWorker f = tlsWorker(TestCertificates.clientContext(CERTS.ca, CERTS.foreignClient),
                    new Message.Register("w-intruder", 1));
            f.recv();
        }).isInstanceOf(IOException.class);

        eventually().until(() -> coordinator.rejected.size() == 2);
        assertThat(coordinator.rejected).allSatisfy(r -> assertThat(r).startsWith("TLS handshake failed: "));
        assertThat(coordinator.pool.snapshot()).isEmpty();
    }

    @Test
    void withMutualTlsAndATokenAWorkerNeedsBoth() throws IOException {
        start(CERTS.server, true, b -> b.token("s3cret"));
        SSLContext withCert = TestCertificates.clientContext(CERTS.ca, CERTS.client);

        FakeWorker noToken = tlsWorker(withCert, new Message.Register("w-notoken", 1));
        assertThat(noToken.readUntilClosed()).hasValueSatisfying(r -> assertThat(r).contains("requires a token"));

        tlsWorker(withCert, new Message.Register("w-both", 1, Message.PROTOCOL_VERSION, "s3cret", null))
                .serve(FakeWorker.ECHO);
        RemoteWorker worker = coordinator.awaitWorker("w-both");
        assertThat(outcomeOf(worker.dispatch(TestJobs.job("t1", "hi"))).jobId().value()).isEqualTo("t1");
    }


    private static String causes(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getMessage()).append(" / ");
        }
        return sb.toString();
    }
}
