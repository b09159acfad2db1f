package dev.panoptes.remote;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Accepting, one loop pass at a time on the test's thread and clock: what a server does when
 * {@code accept} keeps failing (EMFILE), and what an accepted connection costs before it
 * registers.
 */
class ConnectionAcceptorTest {
    private static final long T0 = 1_000;

    private final List<Socket> clients = new ArrayList<>();
    private ServerSocketChannel listening;
    private SelectorLoop loop;

    @BeforeEach
    void startALoopDrivenByHand() throws IOException {
        ServerContext context = new ServerContext(ServerOptions.defaults(), new ServerContext.Events() {
            @Override
            public void onRegistered(RemoteWorker worker) {
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
            }

            @Override
            public void onDraining(RemoteWorker worker) {
            }

            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
            }
        });
        loop = new SelectorLoop("test-loop", context, Runnable::run, () -> {
            throw new AssertionError("this test passes the time to every pass");
        });
        loop.bindToCurrentThread();
        listening = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        listening.configureBlocking(false);
    }

    @AfterEach
    void stop() throws IOException {
        loop.shutdown();
        for (Socket c : clients) {
            c.close();
        }
        listening.close();
    }

    @Test
    void whenAcceptKeepsFailingTheServerPausesWithGrowingBackoffInsteadOfSpinning() throws IOException {
        AtomicInteger attempts = new AtomicInteger();
        AtomicBoolean outOfDescriptors = new AtomicBoolean(true);
        List<SocketChannel> handedOff = new ArrayList<>();
        ConnectionAcceptor acceptor = new ConnectionAcceptor(() -> {
            attempts.incrementAndGet();
            if (outOfDescriptors.get()) {
                throw new IOException("Too many open files");
            }
            return listening.accept();
        }, loop, address(), handedOff::add);
        SelectionKey key = listening.register(loop.selector(), SelectionKey.OP_ACCEPT, acceptor);
        acceptor.attach(key);
        connectClient();

        passUntil(T0, () -> attempts.get() == 1);
        assertThat(key.interestOps()).isZero();
        for (int i = 0; i < 1_000; i++) {
            loop.doWork(T0 + 9);
        }
        assertThat(attempts.get()).as("no attempt during the first 10 ms of backoff").isEqualTo(1);

        passUntil(T0 + 10, () -> attempts.get() == 2);
        for (int i = 0; i < 1_000; i++) {
            loop.doWork(T0 + 29);
        }
        assertThat(attempts.get()).as("the backoff doubled to 20 ms").isEqualTo(2);
        assertThat(acceptor.failures()).isEqualTo(2);

        outOfDescriptors.set(false);
        passUntil(T0 + 30, () -> handedOff.size() == 1);
        assertThat(acceptor.failures()).isZero();
        assertThat(key.interestOps()).isEqualTo(SelectionKey.OP_ACCEPT);
        handedOff.forEach(Closer::closeAll);
    }

    @Test
    void aConnectionThatHasNotRegisteredCostsLittleMemory() throws IOException {
        int connections = 200;
        List<SocketChannel> accepted = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            connectClient();
            SocketChannel channel;
            while ((channel = listening.accept()) == null) {
                Thread.onSpinWait();
            }
            channel.configureBlocking(false);
            accepted.add(channel);
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        loop.doWork(T0);
        long before = threads.getCurrentThreadAllocatedBytes();

        for (SocketChannel channel : accepted) {
            loop.adopt(channel);
        }
        loop.doWork(T0);

        long perConnection = (threads.getCurrentThreadAllocatedBytes() - before) / connections;
        System.out.printf("MEASURED %d bytes allocated per accepted, unregistered connection%n", perConnection);
        // Dispatch queue and outbound buffer come at registration: about 8 KiB that a peer
        // without a token could otherwise make us hold per connection.
        assertThat(perConnection).isLessThan(2_048);
        assertThat(loop.connectionCount()).isEqualTo(connections);
    }

    private InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listening.getLocalAddress();
    }

    private void connectClient() throws IOException {
        Socket client = new Socket();
        client.connect(address(), 5_000);
        clients.add(client);
    }

    private void passUntil(long nowMs, java.util.function.BooleanSupplier condition) throws IOException {
        for (int i = 0; i < 100_000 && !condition.getAsBoolean(); i++) {
            loop.doWork(nowMs);
        }
        assertThat(condition.getAsBoolean()).as("condition reached at " + nowMs).isTrue();
    }
}
