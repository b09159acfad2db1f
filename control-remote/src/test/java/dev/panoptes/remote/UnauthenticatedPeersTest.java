package dev.panoptes.remote;

import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peers that connect and never register, over real loopback sockets: they cannot keep a real
 * worker out, what is over a cap is closed at once, and every connection is counted out again.
 * The flood comes from 127.0.0.1 and the real worker from 127.0.0.2 (both loopback), so that the
 * per-address cap is what stands between them.
 */
class UnauthenticatedPeersTest {
    private static final InetAddress FLOOD = loopback("127.0.0.1");
    private static final InetAddress WORKER = loopback("127.0.0.2");

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
        byte[] garbage = "GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
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
        }

        assertThat(coordinator.server.unregistered().addresses()).isZero();
        // And the room is there for a real worker afterwards.
        assertThat(registerFromAnotherAddress("w-after").recv()).get().isInstanceOf(Message.Registered.class);
        assertThat(coordinator.server.unregisteredConnections()).isZero();
    }

    private static InetAddress loopback(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
