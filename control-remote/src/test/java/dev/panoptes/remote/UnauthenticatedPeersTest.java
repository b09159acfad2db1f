package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import dev.panoptes.remote.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peers that connect and never register, over real loopback sockets: they cannot keep a real
 * worker out, what is over a cap is closed at once, every connection is counted out again, a
 * silent TLS peer holds no TLS buffers, and a TLS 1.2 renegotiation is refused.
 * The flood comes from 127.0.0.1 and the real worker from 127.0.0.2 (both loopback), so that the
 * per-address cap is what stands between them.
 */
class UnauthenticatedPeersTest {
    private static final InetAddress FLOOD = loopback("127.0.0.1");
    private static final InetAddress WORKER = loopback("127.0.0.2");
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

    private TestCoordinator start(UnaryOperator<ServerOptions.Builder> tweak) throws IOException {
        coordinator = TestCoordinator.start(tweak);
        return coordinator;
    }

    /** Non-blocking connections from 127.0.0.1 that send nothing. */
    private List<SocketChannel> idleConnects(int n) throws IOException {
        List<SocketChannel> idle = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SocketChannel c = SocketChannel.open();
            toClose.add(c);
            c.bind(new InetSocketAddress(FLOOD, 0));
            c.connect(coordinator.address());
            c.configureBlocking(false);
            idle.add(c);
        }
        return idle;
    }

    /** True once the coordinator has closed {@code c}: what it sent (a rejected frame) is read and dropped. */
    private static boolean closedByPeer(SocketChannel c) {
        ByteBuffer sink = ByteBuffer.allocate(1024);
        try {
            int n;
            while ((n = c.read(sink)) > 0) {
                sink.clear();
            }
            return n < 0;
        } catch (IOException e) {
            return true; // reset: closed as well
        }
    }

    private static long countClosedByPeer(List<SocketChannel> channels) {
        return channels.stream().filter(UnauthenticatedPeersTest::closedByPeer).count();
    }

    /** A plaintext worker connecting from 127.0.0.2, registered; returns its stream. */
    private MessageStream registerFromAnotherAddress(String id) throws IOException {
        Socket socket = new Socket();
        toClose.add(socket);
        socket.bind(new InetSocketAddress(WORKER, 0));
        socket.connect(coordinator.address(), 10_000);
        socket.setSoTimeout(10_000);
        MessageStream stream = new MessageStream(socket);
        stream.send(new Message.Register(id, 1));
        return stream;
    }

    @Test
    void aFloodOfIdleConnectsFromOneAddressDoesNotKeepAWorkerFromAnotherFromRegistering() throws IOException {
        Duration handshakeTimeout = Duration.ofSeconds(5);
        start(b -> b.maxUnregisteredPerAddress(32).handshakeTimeout(handshakeTimeout));

        List<SocketChannel> flood = idleConnects(300);
        eventually().until(() -> coordinator.server.refusedConnections() == 268);
        assertThat(coordinator.server.unregisteredConnections()).isEqualTo(32);
        assertThat(coordinator.server.unregistered().count(FLOOD)).isEqualTo(32);
        // Closed at accept, not at the handshake timeout: they are all closed while it is far off.
        eventually().atMost(handshakeTimeout.dividedBy(2)).until(() -> countClosedByPeer(flood) == 268);
        assertThat(coordinator.rejected).as("refusals at accept are not reported one by one").isEmpty();

        long startNanos = System.nanoTime();
        MessageStream worker = registerFromAnotherAddress("w-real");
        Optional<Message> answer = worker.recv();

        assertThat(answer).get().isInstanceOf(Message.Registered.class);
        assertThat(Duration.ofNanos(System.nanoTime() - startNanos)).isLessThan(handshakeTimeout);
        coordinator.awaitWorker("w-real");
        assertThat(coordinator.server.unregisteredConnections()).as("a registered worker is not counted")
                .isEqualTo(32);

        for (SocketChannel c : flood) {
            c.close();
        }
        eventually().until(() -> coordinator.server.unregisteredConnections() == 0);
        assertThat(coordinator.server.unregistered().count(FLOOD)).isZero();
        assertThat(coordinator.server.unregistered().addresses()).isZero();
        assertThat(coordinator.pool.snapshot()).hasSize(1);
    }

    @Test
    void afterRoundsOfHostileConnectsAndClosesTheCountsReturnToZero() throws IOException {
        start(b -> b.maxUnregisteredPerAddress(40));
        byte[] garbage = "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] halfAFrame = {0, 0, 1, 0, '{', '"'};

        for (int round = 0; round < 5; round++) {
            long refusedBefore = coordinator.server.refusedConnections();
            int rejectedBefore = coordinator.rejected.size();
            List<SocketChannel> peers = idleConnects(60);
            for (int i = 0; i < peers.size(); i++) {
                // A third send nothing, a third garbage (closed by the coordinator), a third half a frame.
                try {
                    if (i % 3 == 1) {
                        peers.get(i).write(ByteBuffer.wrap(garbage));
                    } else if (i % 3 == 2) {
                        peers.get(i).write(ByteBuffer.wrap(halfAFrame));
                    }
                } catch (IOException e) {
                    // refused over the cap and reset already
                }
            }
            // Every one accepted: refused, counted, or closed by the coordinator already.
            eventually().until(() -> coordinator.server.refusedConnections() - refusedBefore
                    + coordinator.server.unregisteredConnections() + coordinator.rejected.size() - rejectedBefore == 60);
            // At most 20 over the cap of 40: fewer when garbage was closed before the last ones came.
            assertThat(coordinator.server.refusedConnections() - refusedBefore).isBetween(0L, 20L);
            for (SocketChannel c : peers) {
                c.close();
            }
            eventually().until(() -> coordinator.server.unregisteredConnections() == 0);
            // Each one accepted ends in one rejection report (refused, or closed before registering),
            // told later on the listener's thread: wait for all of this round's, or they would count
            // in the next round's sum.
            long refused = coordinator.server.refusedConnections() - refusedBefore;
            eventually().until(() -> coordinator.rejected.size() - rejectedBefore == 60 - refused);
        }

        assertThat(coordinator.server.unregistered().addresses()).isZero();
        // And the room is there for a real worker afterwards.
        assertThat(registerFromAnotherAddress("w-after").recv()).get().isInstanceOf(Message.Registered.class);
        assertThat(coordinator.server.unregisteredConnections()).isZero();
    }

    @Test
    void overTlsIdleAndHalfHandshakingPeersDoNotKeepAWorkerFromRegisteringAndIdleOnesHoldNoTlsBuffers()
            throws Exception {
        Duration handshakeTimeout = Duration.ofSeconds(5);
        start(b -> b.tls(TestCertificates.serverContext(CERTS.server, null), false).maxUnregisteredPerAddress(32)
                .handshakeTimeout(handshakeTimeout));
        SSLContext trusting = TestCertificates.clientContext(CERTS.ca, null);

        // 16 that send a ClientHello and go silent (their handshakes start), then 284 that send nothing.
        List<SocketChannel> halfway = idleConnects(16);
        for (SocketChannel c : halfway) {
            c.write(ByteBuffer.wrap(TestCertificates.clientHello(trusting)));
        }
        List<SocketChannel> idle = idleConnects(284);
        eventually().until(() -> coordinator.server.refusedConnections() == 268);
        assertThat(coordinator.server.unregisteredConnections()).isEqualTo(32);
        eventually().atMost(handshakeTimeout.dividedBy(2)).until(() -> countClosedByPeer(idle) == 268);
        eventually().until(() -> tlsBufferBytesOfConnections().stream().filter(n -> n > 0).count() == 16);
        assertThat(tlsBufferBytesOfConnections()).as("16 handshaking, 16 silent ones holding nothing").hasSize(32)
                .filteredOn(n -> n == 0).hasSize(16);

        long startNanos = System.nanoTime();
        MessageStream worker = registerOverTlsFromAnotherAddress(trusting, "TLSv1.3", "w-tls");
        assertThat(worker.recv()).get().isInstanceOf(Message.Registered.class);
        assertThat(Duration.ofNanos(System.nanoTime() - startNanos)).isLessThan(handshakeTimeout);
        coordinator.awaitWorker("w-tls");

        for (SocketChannel c : halfway) {
            c.close();
        }
        for (SocketChannel c : idle) {
            c.close();
        }
        eventually().until(() -> coordinator.server.unregisteredConnections() == 0);
        assertThat(coordinator.server.unregistered().addresses()).isZero();
        assertThat(coordinator.pool.snapshot()).hasSize(1);
    }

    @Test
    void aTls12PeerThatStartsASecondHandshakeAfterRegisteringIsClosedAndItsJobsFailRetryably() throws Exception {
        start(b -> b.tls(TestCertificates.serverContext(CERTS.server, null), false));
        MessageStream worker = registerOverTlsFromAnotherAddress(TestCertificates.clientContext(CERTS.ca, null),
                "TLSv1.2", "w-reneg");
        assertThat(worker.recv()).get().isInstanceOf(Message.Registered.class);
        RemoteWorker remote = coordinator.awaitWorker("w-reneg");
        CompletableFuture<JobOutcome> job = remote.dispatch(
                TestJobs.job("j1", "p"));
        assertThat(nextNonHeartbeat(worker)).isInstanceOf(Message.Assign.class);

        SSLSocket socket = (SSLSocket) worker.socket();
        assertThat(socket.getSession().getProtocol()).isEqualTo("TLSv1.2");
        socket.startHandshake(); // a client-initiated renegotiation: a fresh ClientHello

        eventually().until(() -> coordinator.lost.size() == 1);
        assertThat(coordinator.lostCauses.get(0)).isInstanceOf(SSLException.class)
                .hasMessageContaining("started a TLS renegotiation on a TLSv1.2 connection, which is refused");
        assertThat(coordinator.pool.snapshot()).isEmpty();
        assertThat(job).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class).havingCause().isInstanceOfSatisfying(ControlException.class,
                        e -> assertThat(e.isRetryable()).isTrue());
        // The worker's side ends too: no renegotiated session, the stream is over.
        assertThat(endsWithoutMoreFrames(worker)).isTrue();
    }

    @Test
    void aTls13PeerThatAsksForANewHandshakeOnlyUpdatesItsKeysAndStaysRegistered() throws Exception {
        start(b -> b.tls(TestCertificates.serverContext(CERTS.server, null), false));
        MessageStream worker = registerOverTlsFromAnotherAddress(TestCertificates.clientContext(CERTS.ca, null),
                "TLSv1.3", "w-keyupdate");
        assertThat(worker.recv()).get().isInstanceOf(Message.Registered.class);
        RemoteWorker remote = coordinator.awaitWorker("w-keyupdate");

        ((SSLSocket) worker.socket()).startHandshake(); // TLS 1.3: a KeyUpdate, not a handshake
        CompletableFuture<JobOutcome> job = remote.dispatch(
                TestJobs.job("j1", "p"));
        Message assign = nextNonHeartbeat(worker);
        assertThat(assign).isInstanceOf(Message.Assign.class);
        worker.send(new Message.Result(TestJobs.echo(((Message.Assign) assign).job())));

        assertThat(job).succeedsWithin(Duration.ofSeconds(10));
        assertThat(coordinator.lost).isEmpty();
        assertThat(remote.isOpen()).isTrue();
    }

    private static Message nextNonHeartbeat(MessageStream stream) throws IOException {
        while (true) {
            Message m = stream.recv().orElseThrow(() -> new IOException("the coordinator closed the connection"));
            if (!(m instanceof Message.Heartbeat)) {
                return m;
            }
        }
    }

    /** Reads to the end: true when it came (or the connection broke) without another frame than heartbeats. */
    private static boolean endsWithoutMoreFrames(MessageStream stream) {
        try {
            while (true) {
                Optional<Message> m = stream.recv();
                if (m.isEmpty()) {
                    return true;
                }
                if (!(m.get() instanceof Message.Heartbeat)) {
                    return false;
                }
            }
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * A TLS worker connecting from 127.0.0.2 with only {@code protocol} enabled, checking the
     * coordinator's certificate for 127.0.0.1; handshake done and {@code register} sent.
     */
    private MessageStream registerOverTlsFromAnotherAddress(SSLContext context, String protocol, String id)
            throws IOException {
        Socket plain = new Socket();
        toClose.add(plain);
        plain.bind(new InetSocketAddress(WORKER, 0));
        plain.connect(coordinator.address(), 10_000);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, "127.0.0.1",
                coordinator.address().getPort(), true);
        toClose.add(socket);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        parameters.setProtocols(new String[] {protocol});
        socket.setSSLParameters(parameters);
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        MessageStream stream = new MessageStream(socket);
        stream.send(new Message.Register(id, 1));
        return stream;
    }

    /** What each connection of the server holds in TLS buffers, asked on each connection's own thread. */
    private List<Integer> tlsBufferBytesOfConnections() throws Exception {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < coordinator.server.options().selectorThreads(); i++) {
            SelectorLoop loop = coordinator.server.loop(i);
            CompletableFuture<List<Integer>> answer = new CompletableFuture<>();
            loop.execute(() -> {
                List<Integer> bytes = new ArrayList<>();
                for (SelectionKey key : loop.selector().keys()) {
                    if (key.isValid() && key.attachment() instanceof ConnectionActor actor) {
                        bytes.add(actor.tlsBufferBytes());
                    }
                }
                answer.complete(bytes);
            });
            all.addAll(answer.get(10, TimeUnit.SECONDS));
        }
        return all;
    }


    private static InetAddress loopback(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
