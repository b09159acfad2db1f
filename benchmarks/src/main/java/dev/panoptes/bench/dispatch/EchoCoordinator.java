package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Latency;
import dev.panoptes.bench.harness.Machine;

import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The coordinator side of the raw-NIO echo floor, in its own JVM: it listens on loopback, takes
 * one connection from an {@link EchoWorker}, and on each {@code run} command keeps K frames of
 * the assign's size in flight, as the Panoptes driver does with jobs, but with no JSON, no
 * queues and no threads besides this one: a blocking channel, one read and one batched write per
 * loop. Whatever Panoptes reaches is measured against this.
 *
 * <p>Commands: {@code run k=K warmupMs=W measureMs=M}; replies {@code MEASURE-START},
 * {@code MEASURE-END} and {@code RESULT jobs=.. nanos=.. count=.. p50=.. ...} (microseconds).
 *
 * <p>Arguments: {@code assignBytes resultBytes} (frame bodies).
 */
public final class EchoCoordinator {
    private EchoCoordinator() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        try {
            int assignBytes = Integer.parseInt(args[0]);
            int resultBytes = Integer.parseInt(args[1]);
            run(assignBytes, resultBytes);
        } catch (Exception | Error e) {
            ChildIo.die("echo coordinator", e);
        }
    }

    private static void run(int assignBytes, int resultBytes) throws IOException {
        BufferedReader commands = ChildIo.commands();
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            ChildIo.reply("READY", "port", ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel ch = server.accept()) {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ChildIo.reply("CONNECTED");
                byte[] frame = FrameScanner.fillerFrame(assignBytes);
                FrameScanner scanner = new FrameScanner(resultBytes + 1);
                while (true) {
                    Kv cmd = ChildIo.nextCommand(commands);
                    if (cmd.tag().equals("run")) {
                        round(ch, frame, scanner, cmd.intValue("k"), cmd.longValue("warmupMs"),
                                cmd.longValue("measureMs"));
                    } else if (cmd.tag().equals("quit")) {
                        return;
                    }
                }
            }
        }
    }

    private static void round(SocketChannel ch, byte[] frame, FrameScanner scanner, int k, long warmupMs,
                              long measureMs) throws IOException {
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        ByteBuffer out = ByteBuffer.allocate(frame.length * k);
        long[] sentAt = new long[k];
        int head = 0;
        int tail = 0;
        int outstanding = 0;
        Histogram histogram = Latency.newHistogram();
        long start = System.nanoTime();
        long measureFrom = start + warmupMs * 1_000_000;
        long measureUntil = measureFrom + measureMs * 1_000_000;
        long measuredFrom = 0;
        long measuredUntil = 0;
        long count = 0;
        boolean measuring = false;
        boolean ended = false;
        long cpuAtStart = 0;
        long cpuAtEnd = 0;

        for (int i = 0; i < k; i++) {
            out.put(frame);
            sentAt[tail] = start;
            tail = (tail + 1) % k;
        }
        outstanding = k;
        writeAll(ch, out);

        while (outstanding > 0) {
            in.clear();
            if (ch.read(in) < 0) {
                throw new IOException("the echo worker closed the connection");
            }
            in.flip();
            int frames = scanner.scan(in);
            long now = System.nanoTime();
            if (!measuring && !ended && now >= measureFrom) {
                measuring = true;
                measuredFrom = now;
                cpuAtStart = Machine.ownCpuNanos();
                ChildIo.reply("MEASURE-START");
            }
            if (measuring && now >= measureUntil) {
                measuring = false;
                ended = true;
                measuredUntil = now;
                cpuAtEnd = Machine.ownCpuNanos();
                ChildIo.reply("MEASURE-END");
            }
            for (int i = 0; i < frames; i++) {
                long latency = now - sentAt[head];
                head = (head + 1) % k;
                outstanding--;
                if (measuring) {
                    histogram.recordValue(Math.max(1, latency));
                    count++;
                }
            }
            if (!ended) {
                out.clear();
                for (int i = 0; i < frames; i++) {
                    out.put(frame);
                    sentAt[tail] = now;
                    tail = (tail + 1) % k;
                }
                outstanding += frames;
                writeAll(ch, out);
            }
        }
        long nanos = measuredUntil - measuredFrom;
        Object[] fields = Latency.of(histogram).kv();
        Object[] all = new Object[fields.length + 6];
        all[0] = "jobs";
        all[1] = count;
        all[2] = "nanos";
        all[3] = nanos;
        all[4] = "selfCpuNanos";
        all[5] = cpuAtEnd - cpuAtStart;
        System.arraycopy(fields, 0, all, 6, fields.length);
        ChildIo.reply("RESULT", all);
    }

    private static void writeAll(SocketChannel ch, ByteBuffer out) throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            ch.write(out);
        }
    }
}
