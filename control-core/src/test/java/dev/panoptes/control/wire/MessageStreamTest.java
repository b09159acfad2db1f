package dev.panoptes.control.wire;

import dev.panoptes.control.ProtocolException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MessageStreamTest {
    private ServerSocket server;
    private Socket client;
    private Socket accepted;

    @BeforeEach
    void connect() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        client = new Socket();
        client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 5000);
        accepted = server.accept();
        accepted.setSoTimeout(10_000);
    }

    @AfterEach
    void close() throws IOException {
        client.close();
        accepted.close();
        server.close();
    }

    @Test
    void messagesSentAreReceivedInOrderAndACleanEndOfStreamIsEmpty() throws IOException {
        MessageStream out = new MessageStream(client);
        MessageStream in = new MessageStream(accepted);
        for (Message m : MessageCodecTest.everyMessageType()) {
            out.send(m);
        }
        client.shutdownOutput();
        List<Message> received = new ArrayList<>();
        for (var m = in.recv(); m.isPresent(); m = in.recv()) {
            received.add(m.get());
        }
        assertThat(received).isEqualTo(MessageCodecTest.everyMessageType());
    }

    @Test
    void concurrentSendersNeverInterleaveFrames() throws Exception {
        MessageStream out = new MessageStream(client);
        MessageStream in = new MessageStream(accepted);
        int threads = 4;
        int perThread = 300;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> sends = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String id = "w" + t;
            sends.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < perThread; i++) {
                    out.send(new Message.Heartbeat(id + "-" + i + "-" + "p".repeat(i % 50)));
                }
                return null;
            }));
        }
        start.countDown();
        int received = 0;
        while (received < threads * perThread) {
            assertThat(in.recv()).get().isInstanceOf(Message.Heartbeat.class);
            received++;
        }
        for (Future<?> f : sends) {
            f.get(10, TimeUnit.SECONDS);
        }
        pool.shutdown();
    }

    @Test
    void aStreamThatEndsInsideAFrameIsATruncationError() throws IOException {
        OutputStream raw = client.getOutputStream();
        raw.write(new byte[] {0, 0, 0, 50, '{', '"'});
        client.shutdownOutput();
        MessageStream in = new MessageStream(accepted);
        assertThatThrownBy(in::recv).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("ended in the middle of a frame");
    }

    @Test
    void aStreamThatEndsInsideALengthPrefixIsATruncationError() throws IOException {
        client.getOutputStream().write(new byte[] {0, 0});
        client.shutdownOutput();
        assertThatThrownBy(new MessageStream(accepted)::recv).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("ended in the middle of a frame");
    }

    @Test
    void anOversizedLengthIsRejected() throws IOException {
        client.getOutputStream().write(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
        assertThatThrownBy(new MessageStream(accepted)::recv).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("exceeds the limit");
    }

    @Test
    void aMalformedFrameIsRejected() throws IOException {
        client.getOutputStream().write(new byte[] {0, 0, 0, 3, '[', '1', ']'});
        assertThatThrownBy(new MessageStream(accepted)::recv).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("must hold one JSON object");
    }
}
