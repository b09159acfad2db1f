package dev.panoptes.bench.fake;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A minimal, fast fake worker in its own JVM, to measure the coordinator alone: one thread, a
 * blocking socket, every frame of a read parsed with the streaming {@link FakeWorkerCodec} and
 * every answer of that read sent in one write. It registers, answers each {@code assign} at once
 * with {@code result} ({@code "re: <prompt>"} per vignette), and sends a heartbeat whenever it has
 * sent nothing for the heartbeat interval.
 *
 * <p>Arguments: {@code port workerId capacity heartbeatMs connectRetryMs}. With
 * {@code connectRetryMs > 0} it retries connecting every 2 ms for that long (to be ready the
 * moment a coordinator starts listening) and reports {@code FIRST-ASSIGN nanos=<System.nanoTime>}
 * when its first assign arrives: the clock is CLOCK_MONOTONIC, shared by every process of the
 * machine, so the parent can compare it with its own.
 *
 * <p>Harnesses outside this module start it as {@code dev.panoptes.bench.FakeWorker}, which only
 * calls {@link #main}.
 */
public final class FastFakeWorker {
    private FastFakeWorker() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.exitWhenStdinCloses();
        try {
            // An optional sixth argument names the models it offers (comma-separated), for runs that name theirs.
            List<String> models = args.length > 5 && !args[5].isEmpty() ? List.of(args[5].split(",")) : List.of();
            serve(Integer.parseInt(args[0]), args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    Long.parseLong(args[4]), models);
        } catch (Exception | Error e) {
            ChildIo.die("fake worker", e);
        }
    }

    private static void serve(int port, String workerId, int capacity, int heartbeatMs, long connectRetryMs,
                              List<String> models) throws IOException, InterruptedException {
        MessageCodec codec = new MessageCodec();
        byte[] heartbeat = codec.encodeFrame(new Message.Heartbeat(workerId));
        try (Socket socket = connect(port, connectRetryMs)) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(heartbeatMs);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            out.write(codec.encodeFrame(new Message.Register(workerId, capacity, Message.PROTOCOL_VERSION, null,
                    Map.of(), models)));
            ChildIo.reply("REGISTERING", "nanos", System.nanoTime());
            FakeWorkerCodec answers = new FakeWorkerCodec();
            byte[] buf = new byte[256 * 1024];
            int start = 0;
            int end = 0;
            long lastSentNanos = System.nanoTime();
            long assigns = 0;
            boolean reportFirst = connectRetryMs > 0;
            while (true) {
                int n;
                try {
                    n = in.read(buf, end, buf.length - end);
                } catch (SocketTimeoutException quiet) {
                    out.write(heartbeat);
                    lastSentNanos = System.nanoTime();
                    continue;
                }
                if (n < 0) {
                    ChildIo.reply("CLOSED", "assigns", assigns);
                    return;
                }
                long readAt = System.nanoTime();
                end += n;
                while (end - start >= 4) {
                    int length = ((buf[start] & 0xff) << 24) | ((buf[start + 1] & 0xff) << 16)
                            | ((buf[start + 2] & 0xff) << 8) | (buf[start + 3] & 0xff);
                    if (length <= 0 || length > codec.maxFrameBytes()) {
                        throw new IOException("bad frame length " + Integer.toUnsignedString(length));
                    }
                    if (end - start - 4 < length) {
                        if (4 + length > buf.length) {
                            buf = Arrays.copyOf(buf, 4 + length);
                        }
                        break;
                    }
                    if (answers.onFrame(buf, start + 4, length)) {
                        if (assigns++ == 0 && reportFirst) {
                            ChildIo.reply("FIRST-ASSIGN", "nanos", readAt);
                        }
                    } else if ("rejected".equals(answers.lastType())) {
                        throw new IOException("the coordinator rejected the registration");
                    }
                    start += 4 + length;
                }
                if (start > 0) {
                    System.arraycopy(buf, start, buf, 0, end - start);
                    end -= start;
                    start = 0;
                }
                if (answers.outLength() > 0) {
                    out.write(answers.out(), 0, answers.outLength());
                    answers.clearOutput();
                    lastSentNanos = readAt;
                } else if (readAt - lastSentNanos >= heartbeatMs * 1_000_000L) {
                    out.write(heartbeat);
                    lastSentNanos = readAt;
                }
            }
        }
    }

    private static Socket connect(int port, long retryMs) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + retryMs * 1_000_000;
        if (retryMs > 0) {
            ChildIo.reply("CONNECTING", "port", port);
        }
        while (true) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                return socket;
            } catch (ConnectException e) {
                socket.close();
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(2);
            }
        }
    }
}
