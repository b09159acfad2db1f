package dev.panoptes.bench.cluster;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many registered, heartbeating workers in one JVM, for the connection-scale measurement: one
 * thread and one selector drive N non-blocking connections. Each connects, sends {@code register}
 * (capacity 1), waits for {@code registered}, then sends a {@code heartbeat} every interval
 * (staggered over the interval in 10 ms slots, as independent workers would be) and reads and
 * drops the coordinator's heartbeats. Connects are limited to a few hundred at a time, as a
 * fleet coming up does not open ten thousand connections in the same microsecond.
 *
 * <p>Commands: {@code connect} (replies {@code CONNECTED registered=.. nanos=..} once all N got
 * {@code registered}, or after the timeout), {@code stats}. Arguments:
 * {@code port n heartbeatMs connectParallel timeoutMs}.
 */
public final class ManyWorkers {
    private static final int SLOT_MS = 10;

    private final InetSocketAddress coordinator;
    private final int n;
    private final long heartbeatMs;
    private final int connectParallel;
    private final long timeoutMs;
    private final MessageCodec codec = new MessageCodec();
    private final List<Conn> conns = new ArrayList<>();
    private final AtomicInteger registered = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private final AtomicInteger rejected = new AtomicInteger();
    private final AtomicLong heartbeatsSent = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();

    /** One worker connection; touched by the I/O thread only. */
    private static final class Conn {
        final int index;
        final byte[] heartbeat;
        SocketChannel channel;
        SelectionKey key;
        ByteBuffer unsent;
        int headerBytes;
        int length;
        int bodyLeft;
        /** Body of the first frame (registered or rejected), kept to read its type. */
        byte[] first;
        int firstFilled;
        boolean registered;
        boolean closed;

        Conn(int index, byte[] heartbeat) {
            this.index = index;
            this.heartbeat = heartbeat;
        }
    }

    private ManyWorkers(int port, int n, long heartbeatMs, int connectParallel, long timeoutMs) {
        this.coordinator = new InetSocketAddress("127.0.0.1", port);
        this.n = n;
        this.heartbeatMs = heartbeatMs;
        this.connectParallel = connectParallel;
        this.timeoutMs = timeoutMs;
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        try {
            ManyWorkers workers = new ManyWorkers(Integer.parseInt(args[0]), Integer.parseInt(args[1]),
                    Long.parseLong(args[2]), Integer.parseInt(args[3]), Long.parseLong(args[4]));
            BufferedReader commands = ChildIo.commands();
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                switch (cmd.tag()) {
                    case "connect" -> {
                        ChildIo.startDaemon("many-workers-io", "many workers I/O", workers::runIo);
                    }
                    case "stats" -> ChildIo.reply("STATS", "registered", workers.registered.get(),
                            "closed", workers.closed.get(), "rejected", workers.rejected.get(),
                            "heartbeatsSent", workers.heartbeatsSent.get(),
                            "bytesReceived", workers.bytesReceived.get());
                    default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("many workers", e);
        }
    }

    private void runIo() throws IOException {
        int slots = (int) Math.max(1, heartbeatMs / SLOT_MS);
        List<List<Conn>> wheel = new ArrayList<>();
        for (int i = 0; i < slots; i++) {
            wheel.add(new ArrayList<>());
        }
        ByteBuffer read = ByteBuffer.allocate(64 * 1024);
        try (Selector selector = Selector.open()) {
            long start = System.nanoTime();
            long deadline = start + timeoutMs * 1_000_000;
            int started = 0;
            int connecting = 0;
            boolean reported = false;
            long lastSlotTick = start / (SLOT_MS * 1_000_000L);
            while (true) {
                while (started < n && connecting < connectParallel) {
                    Conn c = new Conn(started, codec.encodeFrame(new Message.Heartbeat(workerId(started))));
                    conns.add(c);
                    wheel.get(started % slots).add(c);
                    c.channel = SocketChannel.open();
                    c.channel.configureBlocking(false);
                    c.channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    if (c.channel.connect(coordinator)) {
                        onConnected(c, selector);
                    } else {
                        c.key = c.channel.register(selector, SelectionKey.OP_CONNECT, c);
                        connecting++;
                    }
                    started++;
                }
                selector.select(SLOT_MS);
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    Conn c = (Conn) key.attachment();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isConnectable()) {
                        connecting--;
                        try {
                            c.channel.finishConnect();
                            onConnected(c, selector);
                        } catch (IOException e) {
                            close(c, key);
                        }
                        continue;
                    }
                    if (key.isReadable()) {
                        onReadable(c, key, read);
                    }
                }
                long now = System.nanoTime();
                if (!reported && (registered.get() + rejected.get() + closed.get() >= n || now - deadline > 0)) {
                    reported = true;
                    ChildIo.reply("CONNECTED", "registered", registered.get(), "rejected", rejected.get(),
                            "closed", closed.get(), "nanos", now - start, "startNanos", start, "endNanos", now);
                }
                long slotTick = now / (SLOT_MS * 1_000_000L);
                for (long t = lastSlotTick + 1; t <= slotTick; t++) {
                    for (Conn c : wheel.get((int) (t % slots))) {
                        heartbeat(c);
                    }
                }
                lastSlotTick = slotTick;
            }
        }
    }

    private void onConnected(Conn c, Selector selector) throws IOException {
        c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
        ByteBuffer register = ByteBuffer.wrap(codec.encodeFrame(new Message.Register(workerId(c.index), 1)));
        c.channel.write(register);
        if (register.hasRemaining()) {
            c.unsent = register;
        }
    }

    private void heartbeat(Conn c) {
        if (!c.registered || c.closed) {
            return;
        }
        try {
            if (c.unsent != null) {
                c.channel.write(c.unsent);
                if (c.unsent.hasRemaining()) {
                    return; // the coordinator is not reading; do not pile up more
                }
                c.unsent = null;
            }
            ByteBuffer frame = ByteBuffer.wrap(c.heartbeat);
            c.channel.write(frame);
            heartbeatsSent.incrementAndGet();
            if (frame.hasRemaining()) {
                c.unsent = frame;
            }
        } catch (IOException e) {
            close(c, c.key);
        }
    }

    private void onReadable(Conn c, SelectionKey key, ByteBuffer read) {
        read.clear();
        int got;
        try {
            got = c.channel.read(read);
        } catch (IOException e) {
            close(c, key);
            return;
        }
        if (got < 0) {
            close(c, key);
            return;
        }
        bytesReceived.addAndGet(got);
        read.flip();
        while (read.hasRemaining()) {
            if (c.bodyLeft > 0) {
                int take = Math.min(c.bodyLeft, read.remaining());
                if (c.first != null && c.firstFilled < c.first.length) {
                    int keep = Math.min(take, c.first.length - c.firstFilled);
                    read.get(c.first, c.firstFilled, keep);
                    c.firstFilled += keep;
                    read.position(read.position() + (take - keep));
                } else {
                    read.position(read.position() + take);
                }
                c.bodyLeft -= take;
                if (c.bodyLeft == 0 && c.first != null) {
                    onFirstFrame(c);
                }
                continue;
            }
            c.length = (c.length << 8) | (read.get() & 0xff);
            if (++c.headerBytes == 4) {
                c.bodyLeft = c.length;
                if (!c.registered && c.first == null) {
                    c.first = new byte[Math.min(c.length, 256)];
                }
                c.headerBytes = 0;
                c.length = 0;
            }
        }
    }

    private void onFirstFrame(Conn c) {
        String text = new String(c.first, 0, c.firstFilled, StandardCharsets.UTF_8);
        c.first = null;
        if (text.contains("\"registered\"")) {
            c.registered = true;
            registered.incrementAndGet();
        } else {
            rejected.incrementAndGet();
            System.err.println("worker " + workerId(c.index) + " got " + text);
        }
    }

    private void close(Conn c, SelectionKey key) {
        if (c.closed) {
            return;
        }
        c.closed = true;
        closed.incrementAndGet();
        if (key != null) {
            key.cancel();
        }
        try {
            c.channel.close();
        } catch (IOException e) {
            // Closing a broken connection; nothing more to do.
        }
    }

    private static String workerId(int index) {
        return String.format("scale-%05d", index);
    }
}
