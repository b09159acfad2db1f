package dev.panoptes.remote.tls;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import javax.net.ssl.SSLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Both ends of a {@link TlsSession} over one loopback connection, pumped by hand on the test's
 * thread (delegated tasks inline): what each end holds before and after the first bytes.
 */
class TlsSessionTest {
    private static final TestCertificates CERTS = TestCertificates.create();

    private ServerSocketChannel listening;
    private SocketChannel clientChannel;
    private SocketChannel serverChannel;

    @BeforeEach
    void connect() throws IOException {
        listening = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        clientChannel = SocketChannel.open(listening.getLocalAddress());
        serverChannel = listening.accept();
        clientChannel.configureBlocking(false);
        serverChannel.configureBlocking(false);
    }

    @AfterEach
    void close() throws IOException {
        clientChannel.close();
        serverChannel.close();
        listening.close();
    }

    private TlsSession server() {
        return TlsSession.server(TestCertificates.serverContext(CERTS.server, null), false, serverChannel, null, null);
    }

    private TlsSession client() {
        return TlsSession.client(TestCertificates.clientContext(CERTS.ca, null), "127.0.0.1", 7070, clientChannel,
                null, null);
    }

    @Test
    void theServersEndHoldsNoEngineAndNoBufferUntilTheClientsFirstBytes() throws IOException {
        TlsSession server = server();

        assertThat(server.bufferBytes()).isZero();
        assertThat(server.isEngineStarted()).isFalse();
        // Selected with nothing to read, or flushed, it still makes nothing.
        assertThat(server.unwrap()).isNull();
        server.flush();
        assertThat(server.hasPendingOutput()).isFalse();
        assertThat(server.bufferBytes()).isZero();
        assertThat(server.isEngineStarted()).isFalse();

        TlsSession client = client();
        client.flush();
        pumpUntil(() -> server.isEngineStarted(), client, server);
        assertThat(server.bufferBytes()).isPositive();
    }

    @Test
    void bothEndsHandshakeAndExchangeDataWithBuffersMadeOnDemand() throws IOException {
        TlsSession server = server();
        TlsSession client = client();
        assertThat(client.isEngineStarted()).as("the client speaks first").isTrue();
        assertThat(client.hasPendingOutput()).as("its ClientHello waits for a flush").isTrue();

        pumpUntil(() -> server.isHandshakeComplete() && client.isHandshakeComplete(), client, server);

        // More than a record each way, so that records are split and buffers grow as they must.
        byte[] big = "0123456789".repeat(4_000).getBytes(StandardCharsets.US_ASCII);
        ByteBuffer toServer = ByteBuffer.wrap(big);
        ByteBuffer toClient = ByteBuffer.wrap("registered".getBytes(StandardCharsets.US_ASCII));
        ByteArrayOutputStream atServer = new ByteArrayOutputStream();
        ByteArrayOutputStream atClient = new ByteArrayOutputStream();
        await().atMost(Duration.ofSeconds(10)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1)).until(() -> {
                    client.write(toServer);
                    server.write(toClient);
                    drain(server, atServer);
                    drain(client, atClient);
                    return atServer.size() == big.length && atClient.size() == 10;
                });

        assertThat(atServer.toByteArray()).isEqualTo(big);
        assertThat(atClient.toString(StandardCharsets.US_ASCII)).isEqualTo("registered");
        assertThat(server.describe()).startsWith("TLSv1.3");
    }

    @Test
    void whenTheTaskExecutorRefusesTheHandshakeFailsSayingWhyInsteadOfRunningTheTasksOnTheOwnersThread()
            throws IOException {
        AtomicInteger ranOnTheOwner = new AtomicInteger();
        TlsSession server = TlsSession.server(TestCertificates.serverContext(CERTS.server, null), false,
                serverChannel, task -> {
                    throw new RejectedExecutionException("the coordinator is overloaded with TLS handshakes");
                }, ranOnTheOwner::incrementAndGet);
        TlsSession client = client();
        client.flush();
        await().atMost(Duration.ofSeconds(10)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1)).until(() -> server.readNet() > 0);

        assertThatThrownBy(server::unwrap)
                .isInstanceOf(SSLException.class)
                .hasMessageContaining("the TLS handshake's tasks were refused")
                .hasMessageContaining("overloaded with TLS handshakes")
                .hasCauseInstanceOf(RejectedExecutionException.class);
        assertThat(ranOnTheOwner.get()).as("nothing was run or resumed").isZero();
        assertThat(server.isHandshakeComplete()).isFalse();
        assertThat(server.isTaskRunning()).isFalse();
    }

    @Test
    void tasksWhoseConnectionClosedWhileTheyWaitedAreDroppedUnrun() throws Exception {
        List<Runnable> waiting = new ArrayList<>();
        AtomicInteger done = new AtomicInteger();
        TlsSession server = TlsSession.server(TestCertificates.serverContext(CERTS.server, null), false,
                serverChannel, waiting::add, done::incrementAndGet);
        TlsSession client = client();
        client.flush();
        pumpUntil(() -> !waiting.isEmpty(), client, server);
        assertThat(server.isTaskRunning()).isTrue();

        serverChannel.close(); // the peer timed out or went away while its tasks waited
        waiting.get(0).run();

        assertThat(done.get()).as("the owner is still woken").isEqualTo(1);
        assertThat(server.isTaskRunning()).isFalse();
        assertThat(server.hasPendingOutput()).as("no ServerHello was made: the engine's tasks never ran").isFalse();
    }

    /** Moves bytes both ways, unwrapping and flushing, until the condition holds. */
    private static void pumpUntil(BooleanSupplier condition, TlsSession client, TlsSession server) {
        await().atMost(Duration.ofSeconds(10)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1)).until(() -> {
                    for (TlsSession end : new TlsSession[] {client, server}) {
                        end.flush();
                        end.readNet();
                        while (end.unwrap() != null) {
                            // handshake only: no application data yet
                        }
                        end.flush();
                    }
                    return condition.getAsBoolean();
                });
    }

    private static void drain(TlsSession end, ByteArrayOutputStream into) throws IOException {
        end.flush();
        int n;
        do {
            n = end.readNet();
            ByteBuffer plain;
            while ((plain = end.unwrap()) != null) {
                byte[] bytes = new byte[plain.remaining()];
                plain.get(bytes);
                into.writeBytes(bytes);
            }
        } while (n > 0);
        end.flush();
    }
}
