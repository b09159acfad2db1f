package dev.panoptes.bench.fleet;

import dev.panoptes.bench.fake.FakeWorkerCodec;
import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simulated fleet in one JVM, for the {@code fleet} measurement: N worker connections to one
 * coordinator, driven by a few non-blocking I/O threads (one selector each), each connection a
 * worker of capacity C speaking the real protocol: {@code register} with the token and the model,
 * a {@code heartbeat} every interval, and a {@code result} for each {@code assign}, after a fixed
 * latency (a GPU server answering) or at once. The results are full records as a real worker
 * sends them ({@link FakeWorkerCodec#FakeWorkerCodec(String, long)}): model, finish reason, latency,
 * usage, the arithmetic answer.
 *
 * <p>Arguments: {@code port connections capacity latencyMs threads token heartbeatMs model}
 * (token {@code -} for none). It replies {@code READY}, then on the command {@code connect} tries
 * the port every 2 ms until the coordinator listens (so that the time to first dispatch is the
 * coordinator's, not this process's start), opens every other connection, and reports
 * {@code FIRST-ASSIGN nanos=..} (System.nanoTime, the machine's monotonic clock, comparable with
 * the parent's), {@code REGISTERED count=.. nanos=..} once all are registered, and
 * {@code CLOSED answers=..} once the coordinator has closed every connection. {@code stats} replies
 * {@code STATS answers=.. assigns=.. registered=.. closed=..}.
 *
 * <p>Each connection belongs to one I/O thread and is touched by it only; the counters are shared.
 */
public final class FakeFleet {
    private final InetSocketAddress coordinator;
    private final int connections;
    private final int capacity;
    private final long latencyNanos;
    private final int threads;
    private final String token;
    private final long heartbeatNanos;
    private final String model;
    private final AtomicLong answers = new AtomicLong();
    private final AtomicLong assigns = new AtomicLong();
    private final AtomicInteger registered = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private final AtomicBoolean firstAssign = new AtomicBoolean();

    private FakeFleet(String[] args) {
        this.coordinator = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0]));
        this.connections = Integer.parseInt(args[1]);
        this.capacity = Integer.parseInt(args[2]);
        this.latencyNanos = Long.parseLong(args[3]) * 1_000_000L;
        this.threads = Integer.parseInt(args[4]);
        this.token = "-".equals(args[5]) ? null : args[5];
        this.heartbeatNanos = Long.parseLong(args[6]) * 1_000_000L;
        this.model = args[7];
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        try {
            FakeFleet fleet = new FakeFleet(args);
            BufferedReader commands = ChildIo.commands();
            ChildIo.reply("READY", "connections", fleet.connections, "threads", fleet.threads);
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                switch (cmd.tag()) {
                    case "connect" -> {
                        ChildIo.startDaemon("fleet-start", "fleet start", fleet::start);
                    }
                    case "stats" -> ChildIo.reply("STATS", "answers", fleet.answers.get(), "assigns",
                            fleet.assigns.get(), "registered", fleet.registered.get(), "closed", fleet.closed.get());
                    default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("fake fleet", e);
        }
    }

    /** Waits for the coordinator to listen, then starts the I/O threads with their connections. */
    private void start() throws IOException, InterruptedException {
        SocketChannel first;
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (true) {
            SocketChannel c = SocketChannel.open();
            try {
                c.connect(coordinator);
                first = c;
                break;
            } catch (ConnectException e) {
                c.close();
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(2);
            }
        }
        for (int t = 0; t < threads; t++) {
            Loop loop = new Loop(t, t == 0 ? first : null);
            ChildIo.startDaemon("fleet-io-" + t, "fleet I/O", loop::run);
        }
    }

    /** One worker connection; owned by its loop's thread. */
    private static final class Conn {
        final int index;
        final byte[] heartbeat;
        SocketChannel channel;
        SelectionKey key;
        byte[] in = new byte[16 * 1024];
        ByteBuffer inView = ByteBuffer.wrap(in);
        int inStart;
        int inEnd;
        ByteBuffer out = ByteBuffer.allocate(16 * 1024);
        long lastHeartbeatNanos;
        boolean registered;
        boolean closed;

        Conn(int index, byte[] heartbeat) {
            this.index = index;
            this.heartbeat = heartbeat;
        }

        void queue(byte[] bytes, int offset, int length) {
            if (out.remaining() < length) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(out.capacity() * 2, out.position() + length));
                out.flip();
                bigger.put(out);
                out = bigger;
            }
            out.put(bytes, offset, length);
        }
    }

    /** An answer waiting for its latency to pass; FIFO, as every answer waits as long. */
    private record Due(Conn conn, long atNanos, byte[] frame, int records) {
    }

    /** One I/O thread: a selector, its connections, its answers waiting. */
    private final class Loop {
        private final int id;
        private final SocketChannel firstChannel;
        private final MessageCodec codec = new MessageCodec();
        private final FakeWorkerCodec answerCodec;
        private final ArrayDeque<Due> due = new ArrayDeque<>();
        private final List<Conn> conns = new ArrayList<>();
        private final List<Conn> dirty = new ArrayList<>();
        /** Connections opened and not yet registered (or closed). */
        private int waitingToRegister;

        Loop(int id, SocketChannel firstChannel) {
            this.id = id;
            this.firstChannel = firstChannel;
            this.answerCodec = new FakeWorkerCodec(model, latencyNanos / 1_000_000L);
        }

        void run() throws IOException {
            try (Selector selector = Selector.open()) {
                int next = id;
                // The coordinator refuses more than 64 connections from one address waiting to
                // register (maxUnregisteredPerAddress): open the next only as earlier ones register.
                int waitingLimit = Math.max(1, 32 / threads);
                long nextTick = System.nanoTime();
                while (true) {
                    while (next < connections && waitingToRegister < waitingLimit) {
                        waitingToRegister++;
                        Conn c = new Conn(next, codec.encodeFrame(new Message.Heartbeat(workerId(next))));
                        conns.add(c);
                        // Staggered, as independent workers' heartbeats are.
                        c.lastHeartbeatNanos = System.nanoTime() - heartbeatNanos * next / Math.max(1, connections);
                        if (next == 0 && firstChannel != null) {
                            c.channel = firstChannel;
                            c.channel.configureBlocking(false);
                            onConnected(c, selector);
                        } else {
                            c.channel = SocketChannel.open();
                            c.channel.configureBlocking(false);
                            if (c.channel.connect(coordinator)) {
                                onConnected(c, selector);
                            } else {
                                c.key = c.channel.register(selector, SelectionKey.OP_CONNECT, c);
                            }
                        }
                        next += threads;
                    }
                    long now = System.nanoTime();
                    long wait = nextTick - now;
                    if (!due.isEmpty()) {
                        wait = Math.min(wait, due.peekFirst().atNanos() - now);
                    }
                    if (wait <= 0) {
                        selector.selectNow();
                    } else {
                        selector.select(Math.max(1, wait / 1_000_000L));
                    }
                    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                    while (it.hasNext()) {
                        SelectionKey key = it.next();
                        it.remove();
                        Conn c = (Conn) key.attachment();
                        if (!key.isValid()) {
                            continue;
                        }
                        try {
                            if (key.isConnectable()) {
                                c.channel.finishConnect();
                                onConnected(c, selector);
                                continue;
                            }
                            if (key.isReadable()) {
                                onReadable(c);
                            }
                            if (key.isValid() && key.isWritable()) {
                                markDirty(c);
                            }
                        } catch (IOException e) {
                            close(c);
                        }
                    }
                    now = System.nanoTime();
                    while (!due.isEmpty() && due.peekFirst().atNanos() - now <= 0) {
                        Due d = due.pollFirst();
                        if (!d.conn().closed) {
                            d.conn().queue(d.frame(), 0, d.frame().length);
                            answers.addAndGet(d.records());
                            markDirty(d.conn());
                        }
                    }
                    if (now - nextTick >= 0) {
                        nextTick = now + 100_000_000L;
                        for (Conn c : conns) {
                            if (c.registered && !c.closed && now - c.lastHeartbeatNanos >= heartbeatNanos) {
                                c.queue(c.heartbeat, 0, c.heartbeat.length);
                                c.lastHeartbeatNanos = now;
                                markDirty(c);
                            }
                        }
                    }
                    flush();
                }
            }
        }

        private void onConnected(Conn c, Selector selector) throws IOException {
            c.channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
            byte[] register = codec.encodeFrame(new Message.Register(workerId(c.index), capacity,
                    Message.PROTOCOL_VERSION, token, Map.of(), List.of(model)));
            c.queue(register, 0, register.length);
            markDirty(c);
        }

        private void onReadable(Conn c) throws IOException {
            if (c.inEnd == c.in.length) {
                grow(c, c.in.length * 2);
            }
            c.inView.limit(c.in.length).position(c.inEnd);
            int n = c.channel.read(c.inView);
            if (n < 0) {
                close(c);
                return;
            }
            long readAt = System.nanoTime();
            c.inEnd += n;
            while (c.inEnd - c.inStart >= 4) {
                byte[] b = c.in;
                int s = c.inStart;
                int length = ((b[s] & 0xff) << 24) | ((b[s + 1] & 0xff) << 16) | ((b[s + 2] & 0xff) << 8)
                        | (b[s + 3] & 0xff);
                if (length <= 0 || length > codec.maxFrameBytes()) {
                    throw new IOException("bad frame length " + Integer.toUnsignedString(length));
                }
                if (c.inEnd - s - 4 < length) {
                    if (4 + length > c.in.length) {
                        grow(c, 4 + length);
                    }
                    break;
                }
                if (answerCodec.onFrame(b, s + 4, length)) {
                    onAssign(c, readAt);
                } else if ("registered".equals(answerCodec.lastType())) {
                    c.registered = true;
                    waitingToRegister--;
                    c.lastHeartbeatNanos = readAt - heartbeatNanos * c.index / Math.max(1, connections);
                    if (registered.incrementAndGet() == connections) {
                        ChildIo.reply("REGISTERED", "count", connections, "nanos", readAt);
                    }
                } else if ("rejected".equals(answerCodec.lastType())) {
                    throw new IllegalStateException("the coordinator rejected worker " + workerId(c.index) + ": "
                            + new String(b, s + 4, length, java.nio.charset.StandardCharsets.UTF_8));
                }
                c.inStart += 4 + length;
            }
            if (c.inStart > 0) {
                System.arraycopy(c.in, c.inStart, c.in, 0, c.inEnd - c.inStart);
                c.inEnd -= c.inStart;
                c.inStart = 0;
            }
        }

        private void onAssign(Conn c, long readAt) {
            if (assigns.getAndIncrement() == 0 && firstAssign.compareAndSet(false, true)) {
                ChildIo.reply("FIRST-ASSIGN", "nanos", readAt);
            }
            int records = countRecords();
            if (latencyNanos == 0) {
                c.queue(answerCodec.out(), 0, answerCodec.outLength());
                answers.addAndGet(records);
                markDirty(c);
            } else {
                due.addLast(new Due(c, readAt + latencyNanos,
                        Arrays.copyOf(answerCodec.out(), answerCodec.outLength()), records));
            }
            answerCodec.clearOutput();
        }

        /** Records in the answer just written: one per vignette of the assign. */
        private int countRecords() {
            return answerCodec.lastRecords();
        }

        private void grow(Conn c, int size) {
            c.in = Arrays.copyOf(c.in, size);
            c.inView = ByteBuffer.wrap(c.in);
        }

        private void markDirty(Conn c) {
            if (!c.closed && c.out.position() > 0) {
                dirty.add(c);
            }
        }

        /** Writes what each touched connection has queued; what the socket does not take waits for OP_WRITE. */
        private void flush() {
            for (Conn c : dirty) {
                if (c.closed || c.out.position() == 0) {
                    continue;
                }
                try {
                    c.out.flip();
                    c.channel.write(c.out);
                    c.out.compact();
                    int ops = c.out.position() > 0 ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ;
                    if (c.key.interestOps() != ops) {
                        c.key.interestOps(ops);
                    }
                } catch (IOException e) {
                    close(c);
                }
            }
            dirty.clear();
        }

        private void close(Conn c) {
            if (c.closed) {
                return;
            }
            c.closed = true;
            if (!c.registered) {
                waitingToRegister--;
            }
            if (c.key != null) {
                c.key.cancel();
            }
            try {
                c.channel.close();
            } catch (IOException e) {
                // Closing a broken connection; nothing more to do.
            }
            if (closed.incrementAndGet() == connections) {
                ChildIo.reply("CLOSED", "answers", answers.get(), "assigns", assigns.get());
            }
        }
    }

    private static String workerId(int index) {
        return String.format("fleet-%05d", index);
    }
}
