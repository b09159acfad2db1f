package dev.panoptes.testing;

import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted coordinator for tests: a loopback listener whose connections are {@link Peer}s the
 * test reads from and writes to. Never answers anything on its own: the script does.
 */
public final class FakeCoordinator implements AutoCloseable {
    /** How long a test waits for something that should happen promptly. */
    public static final Duration PATIENCE = Duration.ofSeconds(15);

    private final ServerSocket server;
    private final List<Peer> peers = new CopyOnWriteArrayList<>();

    private FakeCoordinator(ServerSocket server) {
        this.server = server;
    }

    /** Listens on 127.0.0.1 on an ephemeral port. */
    public static FakeCoordinator start() throws IOException {
        return startOn(0);
    }

    /** Listens on 127.0.0.1:{@code port}, with SO_REUSEADDR so that a just-closed port can be reused. */
    public static FakeCoordinator startOn(int port) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return new FakeCoordinator(server);
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Waits for the next worker connection. */
    public Peer accept() throws IOException {
        server.setSoTimeout((int) PATIENCE.toMillis());
        Socket socket;
        try {
            socket = server.accept();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no worker connected to " + address() + " within " + PATIENCE.toSeconds() + " s", e);
        }
        Peer peer = new Peer(new MessageStream(socket));
        peers.add(peer);
        return peer;
    }

    /** Waits for the next connection and its {@code register}, which must come first. */
    public Peer acceptRegistered() throws IOException, InterruptedException {
        Peer peer = accept();
        peer.expectRegister();
        return peer;
    }

    /**
     * Takes a connection that a worker has made and no accept has taken yet, without waiting for
     * one to come, and closes it.
     *
     * @return whether there was one
     */
    public boolean takePendingConnection() throws IOException {
        // The kernel completes a loopback connect before the worker's connect() returns, so a
        // connection already made is in the backlog: a millisecond is enough to take it.
        server.setSoTimeout(1);
        Socket pending;
        try {
            pending = server.accept();
        } catch (SocketTimeoutException e) {
            return false;
        }
        pending.close();
        return true;
    }

    /** Stops listening and closes every connection. */
    @Override
    public void close() throws IOException {
        server.close();
        for (Peer p : peers) {
            p.close();
        }
    }

    /** One worker connection. A reader thread queues every frame the worker sends. */
    public static final class Peer implements AutoCloseable {
        private static final Object END_OF_STREAM = new Object();

        private final MessageStream stream;
        private final BlockingQueue<Object> frames = new LinkedBlockingQueue<>();
        private final List<Message> all = new CopyOnWriteArrayList<>();
        private final AtomicInteger heartbeats = new AtomicInteger();
        private final Thread reader;
        private volatile Message.Register register;

        public Peer(MessageStream stream) {
            this.stream = stream;
            this.reader = new Thread(this::readAll, "fake-coordinator-reader");
            reader.setDaemon(true);
            reader.start();
        }

        private void readAll() {
            try {
                while (true) {
                    Optional<Message> m = stream.recv();
                    if (m.isEmpty()) {
                        break;
                    }
                    all.add(m.get());
                    if (m.get() instanceof Message.Heartbeat) {
                        heartbeats.incrementAndGet();
                    }
                    frames.add(m.get());
                }
            } catch (IOException | RuntimeException e) {
                frames.add(e);
            }
            frames.add(END_OF_STREAM);
        }

        /** The next frame, heartbeats included; fails when none comes or the stream ends. */
        public Message next() throws InterruptedException {
            Object o = frames.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
            if (o == null) {
                throw new AssertionError("the worker sent nothing within " + PATIENCE.toSeconds() + " s");
            }
            if (o == END_OF_STREAM) {
                frames.add(END_OF_STREAM);
                throw new AssertionError("the worker closed the connection; frames so far: " + all);
            }
            if (o instanceof Throwable t) {
                throw new AssertionError("reading from the worker failed", t);
            }
            return (Message) o;
        }

        /** The next frame that is not a heartbeat, which must be of {@code type}. */
        public <T extends Message> T expect(Class<T> type) throws InterruptedException {
            while (true) {
                Message m = next();
                if (m instanceof Message.Heartbeat) {
                    continue;
                }
                if (!type.isInstance(m)) {
                    throw new AssertionError("expected a " + type.getSimpleName() + " frame, got " + m);
                }
                return type.cast(m);
            }
        }

        /** The first frame, which must be {@code register}. */
        public Message.Register expectRegister() throws InterruptedException {
            Message m = next();
            if (!(m instanceof Message.Register r)) {
                throw new AssertionError("the first frame must be register, got " + m);
            }
            register = r;
            return r;
        }

        /**
         * Waits for the worker's end of stream and returns the frames that came before it, heartbeats
         * left out; fails when the worker keeps the connection open.
         */
        public List<Message> framesUntilEndOfStream() throws InterruptedException {
            List<Message> rest = new ArrayList<>();
            while (true) {
                Object o = frames.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
                if (o == null) {
                    throw new AssertionError("the worker did not close the connection within " + PATIENCE.toSeconds()
                            + " s; frames so far: " + all);
                }
                if (o == END_OF_STREAM || o instanceof Throwable) {
                    frames.add(END_OF_STREAM);
                    return rest;
                }
                if (!(o instanceof Message.Heartbeat)) {
                    rest.add((Message) o);
                }
            }
        }

        /** The register frame, once {@link #expectRegister()} has read it. */
        public Message.Register register() {
            return register;
        }

        /** How many heartbeats the worker has sent on this connection so far. */
        public int heartbeats() {
            return heartbeats.get();
        }

        /** Every frame received so far, in order. */
        public List<Message> received() {
            return List.copyOf(all);
        }

        public void send(Message m) throws IOException {
            stream.send(m);
        }

        /** Sends the frames in one write, as a coordinator assigning a whole window does. */
        public void sendAll(List<? extends Message> messages) throws IOException {
            stream.sendAll(messages);
        }

        /**
         * Closes the way a coordinator that shuts down does: end of stream first, so that the worker
         * reads every frame sent before it, then the socket once the worker has closed its side.
         */
        public void closeGracefully() throws IOException, InterruptedException {
            stream.socket().shutdownOutput();
            framesUntilEndOfStream();
            close();
        }

        @Override
        public void close() throws IOException {
            stream.close();
        }
    }
}
