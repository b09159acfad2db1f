package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.harness.ChildIo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The worker side of the raw-NIO echo floor: connects to an {@link EchoCoordinator} and answers
 * every whole frame with a frame of the result's size, batching all the answers of one read
 * into one write. No JSON: only the length prefixes are read.
 *
 * <p>Arguments: {@code port assignBytes resultBytes}. Ends when the connection or its stdin
 * closes.
 */
public final class EchoWorker {
    private EchoWorker() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.exitWhenStdinCloses();
        try {
            serve(Integer.parseInt(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        } catch (Exception | Error e) {
            ChildIo.die("echo worker", e);
        }
    }

    private static void serve(int port, int assignBytes, int resultBytes) throws IOException {
        try (SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            byte[] frame = FrameScanner.fillerFrame(resultBytes);
            FrameScanner scanner = new FrameScanner(assignBytes + 1);
            ByteBuffer in = ByteBuffer.allocate(64 * 1024);
            // Room for the answers of a full read buffer of the smallest frames.
            ByteBuffer out = ByteBuffer.allocate((in.capacity() / (4 + assignBytes) + 1) * frame.length);
            while (true) {
                in.clear();
                if (ch.read(in) < 0) {
                    return;
                }
                in.flip();
                int frames = scanner.scan(in);
                if (frames == 0) {
                    continue;
                }
                out.clear();
                for (int i = 0; i < frames; i++) {
                    out.put(frame);
                }
                out.flip();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            }
        }
    }
}
