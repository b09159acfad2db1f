package dev.panoptes.remote;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import dev.panoptes.remote.tls.TestCertificates;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Accepting, one loop pass at a time on the test's thread and clock: what a server does when
 * {@code accept} keeps failing (EMFILE), what an accepted connection costs before it registers,
 * and the caps on connections that have not registered.
 */
class ConnectionAcceptorTest {
    private static final long T0 = 1_000;

    private final List<Socket> clients = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private ServerSocketChannel listening;
    private SelectorLoop loop;
    private ServerContext context;

    @BeforeEach
    void startALoopDrivenByHand() throws IOException {
        startLoop(b -> b);
    }

    private void startLoop(UnaryOperator<ServerOptions.Builder> options) throws IOException {
        if (loop != null) {
            loop.shutdown();
            listening.close();
        }
        context = new ServerContext(options.apply(ServerOptions.builder()).build(), new ServerContext.Events() {
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
        }, loop, context, address(), handedOff::add);
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

    @Test
    void aTlsConnectionThatHasSentNothingHoldsNoTlsBuffersAndLittleElse() throws IOException {
        TestCertificates certs = TestCertificates.create();
        startLoop(b -> b.tls(TestCertificates.serverContext(certs.server, null), false));
        int connections = 200;
        List<SocketChannel> accepted = acceptConnections(connections);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        loop.doWork(T0);
        long before = threads.getCurrentThreadAllocatedBytes();

        for (SocketChannel channel : accepted) {
            loop.adopt(channel);
        }
        loop.doWork(T0);

        long perConnection = (threads.getCurrentThreadAllocatedBytes() - before) / connections;
        System.out.printf("MEASURED %d bytes allocated per accepted, silent TLS connection%n", perConnection);
        assertThat(perConnection).as("no SSLEngine and no buffers before the first byte").isLessThan(2_048);
        assertThat(actors()).hasSize(connections).allSatisfy(a -> assertThat(a.tlsBufferBytes()).isZero());

        // The first bytes of a ClientHello: now, and only for that connection, the session starts.
        clients.get(0).getOutputStream().write(new byte[] {0x16, 0x03, 0x01});
        passUntil(T0, () -> actors().stream().anyMatch(a -> a.tlsBufferBytes() > 0));
        assertThat(actors().stream().filter(a -> a.tlsBufferBytes() > 0)).hasSize(1);
    }

    /** The connections of the loop; the test's thread is the loop's. */
    private List<ConnectionActor> actors() {
        List<ConnectionActor> actors = new ArrayList<>();
        for (SelectionKey key : loop.selector().keys()) {
            if (key.isValid() && key.attachment() instanceof ConnectionActor actor) {
                actors.add(actor);
            }
        }
        return actors;
    }

    private List<SocketChannel> acceptConnections(int n) throws IOException {
        List<SocketChannel> accepted = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            connectClient();
            SocketChannel channel;
            while ((channel = listening.accept()) == null) {
                Thread.onSpinWait();
            }
            channel.configureBlocking(false);
            accepted.add(channel);
        }
        return accepted;
    }

    /** An acceptor on the listening socket that gives what it accepts to the loop, warnings to the test. */
    private ConnectionAcceptor acceptIntoTheLoop() throws IOException {
        ConnectionAcceptor acceptor = new ConnectionAcceptor(listening::accept, loop, context, address(), loop::adopt,
                warnings::add);
        acceptor.attach(listening.register(loop.selector(), SelectionKey.OP_ACCEPT, acceptor));
        return acceptor;
    }

    @Test
    void overThePerAddressCapANewConnectionIsClosedAtOnceWithAReasonAndTheFloodLogsOneLinePerInterval()
            throws IOException {
        startLoop(b -> b.maxUnregisteredPerAddress(4));
        acceptIntoTheLoop();
        InetAddress local = InetAddress.getByName("127.0.0.1");
        for (int i = 0; i < 4; i++) {
            connectClient();
        }
        passUntil(T0, () -> context.unregistered.count() == 4);

        List<Socket> refused = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            refused.add(connectClient());
        }
        passUntil(T0, () -> context.unregistered.refused() == 20);

        for (Socket s : refused) {
            MessageStream stream = new MessageStream(s);
            Optional<Message> first = stream.recv();
            assertThat(first).get().isInstanceOfSatisfying(Message.Rejected.class, r -> {
                assertThat(r.retryable()).isTrue();
                assertThat(r.reason()).contains("4 connections from this worker's address")
                        .contains("maxUnregisteredPerAddress");
            });
            assertThat(stream.recv()).as("the end of the stream, right after the reason").isEmpty();
        }
        assertThat(loop.connectionCount()).as("refused connections never reach the loop").isEqualTo(4);
        assertThat(context.unregistered.count(local)).isEqualTo(4);
        assertThat(warnings).as("one line for the first refusal, none per connection").hasSize(1);
        assertThat(warnings.get(0)).contains("refused a connection from 127.0.0.1")
                .contains("4 connections from 127.0.0.1 are waiting to register")
                .contains("ServerOptions.maxUnregisteredPerAddress").contains("one line per 10 s");

        passUntil(T0 + RefusalLog.INTERVAL_MS, () -> warnings.size() == 2);
        assertThat(warnings.get(1)).contains("refused 19 more connections in the last 10 s")
                .contains("maxUnregisteredPerAddress").contains("the last from 127.0.0.1");
        for (int i = 0; i < 1_000; i++) {
            loop.doWork(T0 + 3 * RefusalLog.INTERVAL_MS);
        }
        assertThat(warnings).as("nothing more once the refusals stop").hasSize(2);

        for (Socket s : new ArrayList<>(clients.subList(0, 4))) {
            s.close();
        }
        passUntil(T0 + 3 * RefusalLog.INTERVAL_MS, () -> context.unregistered.count() == 0);
        assertThat(context.unregistered.count(local)).isZero();
        assertThat(context.unregistered.addresses()).isZero();
        connectClient();
        passUntil(T0 + 3 * RefusalLog.INTERVAL_MS, () -> context.unregistered.count() == 1);
        assertThat(context.unregistered.refused()).isEqualTo(20);
    }

    @Test
    void overTheTotalCapTheLineNamesThatCapAndItsOption() throws IOException {
        startLoop(b -> b.maxUnregisteredConnections(3));
        acceptIntoTheLoop();
        for (int i = 0; i < 3; i++) {
            connectClient();
        }
        passUntil(T0, () -> context.unregistered.count() == 3);

        Socket refused = connectClient();
        passUntil(T0, () -> context.unregistered.refused() == 1);

        assertThat(new MessageStream(refused).recv()).get().isInstanceOfSatisfying(Message.Rejected.class,
                r -> assertThat(r.reason()).contains("3 connections waiting to register")
                        .contains("maxUnregisteredConnections"));
        assertThat(warnings).singleElement().asString()
                .contains("3 connections are waiting to register, the most allowed (ServerOptions"
                        + ".maxUnregisteredConnections)");
    }

    @Test
    void aConnectionIsCountedUntilItRegistersAndThenNoLonger() throws IOException {
        startLoop(b -> b.maxUnregisteredPerAddress(1));
        acceptIntoTheLoop();
        MessageStream worker = new MessageStream(connectClient());
        passUntil(T0, () -> context.unregistered.count() == 1);

        worker.send(new Message.Register("w1", 1));
        passUntil(T0, () -> context.unregistered.count() == 0);
        assertThat(worker.recv()).get().isInstanceOf(Message.Registered.class);

        // The one slot of the address is free again: a second worker from it is not refused.
        MessageStream second = new MessageStream(connectClient());
        second.send(new Message.Register("w2", 1));
        passUntil(T0, () -> loop.connectionCount() == 2 && context.unregistered.count() == 0);
        assertThat(second.recv()).get().isInstanceOf(Message.Registered.class);
        assertThat(context.unregistered.refused()).isZero();

        worker.close();
        second.close();
        passUntil(T0, () -> loop.connectionCount() == 0);
        assertThat(context.unregistered.count()).as("a registered worker's close does not count it out again")
                .isZero();
    }

    private InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listening.getLocalAddress();
    }

    private Socket connectClient() throws IOException {
        Socket client = new Socket();
        client.connect(address(), 5_000);
        client.setSoTimeout(10_000);
        clients.add(client);
        return client;
    }

    private void passUntil(long nowMs, java.util.function.BooleanSupplier condition) throws IOException {
        for (int i = 0; i < 100_000 && !condition.getAsBoolean(); i++) {
            loop.doWork(nowMs);
        }
        assertThat(condition.getAsBoolean()).as("condition reached at " + nowMs).isTrue();
    }
}
