package dev.panoptes.bench.model;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fast OpenAI-compatible server of the model-client measurement, in its own JVM: one
 * non-blocking selector thread answers every {@code POST} with the same chat completion (about
 * 500 bytes of JSON, as OpenAI shapes it), over HTTP/1.1 keep-alive, after a fixed delay per
 * listener. It reads the request head and its {@code Content-Length} body and nothing more: it
 * is a load generator's counterpart, not a server for anything else (no chunked bodies, no
 * {@code Expect}, no pipelining beyond answering requests in order).
 *
 * <p>Threads: the selector thread owns every connection; a delayed answer is timed on a single
 * timer thread, which only queues the connection as due and wakes the selector.
 *
 * <p>Why not {@link dev.panoptes.demo.StubModelServer}: the JDK's HttpServer spends a thread
 * hand-off and a good deal of CPU per request, and at 0 ms the server competes with the client
 * being measured for the machine's two cores; a lean server lets the client run faster, so that
 * a run takes seconds, without changing what is measured (the client JVM's CPU per call).
 *
 * <p>Arguments: {@code delaysMs} (comma-separated, one listener each, e.g. {@code 0,20}). Replies
 * {@code READY urls=<base URL>,<base URL>} in the same order; command {@code count} replies
 * {@code COUNT requests=..}.
 */
public final class ModelServerNode {
    private static final byte[] BODY = ("{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":1700000000,"
            + "\"model\":\"bench-model\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
            + "\"4\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":"
            + "{\"prompt_tokens\":14,\"completion_tokens\":1,\"total_tokens\":15,\"prompt_tokens_details\":"
            + "{\"cached_tokens\":0}},\"service_tier\":\"default\",\"system_fingerprint\":\"fp_bench\"}")
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] RESPONSE = concat(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + BODY.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII), BODY);
    private static final byte[] BAD_REQUEST = ("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close"
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);

    private final Selector selector;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "model-server-timer");
        t.setDaemon(true);
        return t;
    });
    /** Connections whose delayed answer is due; filled by the timer, drained by the selector thread. */
    private final Queue<Conn> due = new ConcurrentLinkedQueue<>();
    private final AtomicLong requests = new AtomicLong();

    private ModelServerNode() throws IOException {
        this.selector = Selector.open();
    }

    /** Runs the server as described in the class documentation until stdin closes. */
    public static void main(String[] args) {
        ChildIo.startWatchdog();
        try {
            ModelServerNode server = new ModelServerNode();
            List<String> urls = new ArrayList<>();
            for (String d : args[0].split(",")) {
                urls.add(server.listen(Long.parseLong(d.trim())));
            }
            Thread loop = new Thread(server::loop, "model-server-selector");
            loop.setDaemon(true);
            loop.start();
            ChildIo.reply("READY", "urls", String.join(",", urls));
            BufferedReader commands = ChildIo.commands();
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                if (cmd.tag().equals("count")) {
                    ChildIo.reply("COUNT", "requests", server.requests.get());
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("model server", e);
        }
    }

    private String listen(long delayMs) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0), 1024);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT, delayMs);
        return "http://127.0.0.1:" + server.socket().getLocalPort() + "/v1";
    }

    private void loop() {
        try {
            while (true) {
                selector.select();
                Conn c;
                while ((c = due.poll()) != null) {
                    c.answer();
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept(key);
                    } else {
                        Conn conn = (Conn) key.attachment();
                        if (key.isWritable()) {
                            conn.flush();
                        }
                        if (key.isValid() && key.isReadable()) {
                            conn.read();
                        }
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | RuntimeException e) {
            ChildIo.die("model server selector", e);
        }
    }

    private void accept(SelectionKey key) throws IOException {
        SocketChannel ch;
        while ((ch = ((ServerSocketChannel) key.channel()).accept()) != null) {
            ch.configureBlocking(false);
            ch.socket().setTcpNoDelay(true);
            Conn conn = new Conn(ch, (Long) key.attachment());
            conn.key = ch.register(selector, SelectionKey.OP_READ, conn);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** One client connection; touched by the selector thread only. */
    private final class Conn {
        private final SocketChannel ch;
        private final long delayMs;
        private SelectionKey key;
        private ByteBuffer in = ByteBuffer.allocate(16 * 1024);
        private ByteBuffer out;
        /** True from a request's arrival until its delayed answer is queued for writing. */
        private boolean waiting;

        Conn(SocketChannel ch, long delayMs) {
            this.ch = ch;
            this.delayMs = delayMs;
        }

        void read() throws IOException {
            int n;
            try {
                n = ch.read(in);
            } catch (IOException e) {
                close();
                return;
            }
            if (n < 0) {
                close();
                return;
            }
            if (!in.hasRemaining()) {
                ByteBuffer bigger = ByteBuffer.allocate(in.capacity() * 2);
                in.flip();
                bigger.put(in);
                in = bigger;
            }
            parse();
        }

        /** Takes the next complete request off the buffer, if any, and answers or schedules it. */
        private void parse() throws IOException {
            if (waiting || out != null || !key.isValid()) {
                return;
            }
            int end = headEnd();
            if (end < 0) {
                return;
            }
            long length = contentLength(new String(in.array(), 0, end, StandardCharsets.ISO_8859_1));
            if (length < 0) {
                out = ByteBuffer.wrap(BAD_REQUEST);
                flush();
                close();
                return;
            }
            if (in.position() < end + length) {
                return;
            }
            // Drop the request from the buffer, keeping whatever follows it.
            int total = (int) (end + length);
            in.flip();
            in.position(total);
            in.compact();
            requests.incrementAndGet();
            if (delayMs == 0) {
                answer();
            } else {
                waiting = true;
                timer.schedule(() -> {
                    due.add(this);
                    selector.wakeup();
                }, delayMs, TimeUnit.MILLISECONDS);
            }
        }

        /** Offset just past the blank line ending the request head, or -1. */
        private int headEnd() {
            byte[] a = in.array();
            for (int i = 3; i < in.position(); i++) {
                if (a[i] == '\n' && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
                    return i + 1;
                }
            }
            return -1;
        }

        /** The Content-Length of a head, 0 without one, -1 for a chunked body (not served here). */
        private long contentLength(String head) {
            long length = 0;
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                if (name.equals("content-length")) {
                    length = Long.parseLong(line.substring(colon + 1).trim());
                } else if (name.equals("transfer-encoding")) {
                    return -1;
                }
            }
            return length;
        }

        void answer() throws IOException {
            waiting = false;
            if (!key.isValid()) {
                return;
            }
            out = ByteBuffer.wrap(RESPONSE);
            flush();
        }

        void flush() throws IOException {
            if (out == null) {
                return;
            }
            try {
                ch.write(out);
            } catch (IOException e) {
                close();
                return;
            }
            if (out.hasRemaining()) {
                key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
            out = null;
            key.interestOps(SelectionKey.OP_READ);
            parse();
        }

        private void close() {
            key.cancel();
            try {
                ch.close();
            } catch (IOException e) {
                // Closing a connection the client dropped: nothing to do.
            }
        }
    }
}
