package dev.panoptes.remote;

import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.control.wire.MessageStream;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted fake worker for tests: a real loopback socket and {@link MessageStream}, driven
 * either step by step from the test thread ({@link #register}, {@link #nextAssign},
 * {@link #answer}) or by a background thread ({@link #serve}) that hands each assign to a
 * handler. It counts assigns outstanding (received, not yet answered) and remembers the most
 * it ever saw, to check the coordinator's capacity rule from the worker's side.
 *
 * <p>Blocking reads time out after 10 s, so that a broken coordinator fails a test instead of
 * hanging it.
 */
final class FakeWorker implements AutoCloseable {
    /** What a serving fake worker does with each assign; may answer at once, later, or never. */
    interface AssignHandler {
        void onAssign(FakeWorker worker, Job job) throws IOException;
    }

    /** What a serving fake worker does with every frame it receives. */
    interface MessageHandler {
        void onMessage(FakeWorker worker, Message message) throws IOException;
    }

    /** Answers every assign at once with one record per vignette. */
    static final AssignHandler ECHO = (worker, job) -> worker.answer(job);
    /** Never answers. */
    static final AssignHandler HOLD = (worker, job) -> { };

    private static final int READ_TIMEOUT_MS = 10_000;

    private final Socket socket;
    private final MessageStream stream;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final AtomicInteger maxOutstanding = new AtomicInteger();
    private final List<Job> assigned = new CopyOnWriteArrayList<>();
    private final List<Message> received = new CopyOnWriteArrayList<>();
    private volatile Thread server;
    private volatile Throwable serveFailure;
    private volatile boolean endOfStream;
    private ScheduledExecutorService heartbeats;
    private String workerId = "-";

    private FakeWorker(Socket socket) throws IOException {
        this.socket = socket;
        this.stream = new MessageStream(socket, new MessageCodec());
    }

    /** Connects to the coordinator, without registering. */
    static FakeWorker connect(InetSocketAddress address) throws IOException {
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(address, READ_TIMEOUT_MS);
        socket.setSoTimeout(READ_TIMEOUT_MS);
        return new FakeWorker(socket);
    }

    /**
     * Connects over TLS (the JDK's {@link SSLSocket}, checking the coordinator's certificate for
     * 127.0.0.1 as a worker does) and completes the handshake, without registering.
     *
     * @throws javax.net.ssl.SSLHandshakeException when the handshake fails on this side
     */
    static FakeWorker connectTls(InetSocketAddress address, SSLContext tls) throws IOException {
        Socket plain = new Socket();
        plain.setTcpNoDelay(true);
        plain.connect(address, READ_TIMEOUT_MS);
        SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket(plain, address.getHostString(),
                address.getPort(), true);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        socket.setSSLParameters(parameters);
        socket.setSoTimeout(READ_TIMEOUT_MS);
        try {
            socket.startHandshake();
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        return new FakeWorker(socket);
    }

    /** Connects over TLS and sends {@code register} with this id and capacity. */
    static FakeWorker registerTls(InetSocketAddress address, SSLContext tls, Message.Register register)
            throws IOException {
        FakeWorker worker = connectTls(address, tls);
        worker.send(register);
        worker.workerId = register.workerId();
        return worker;
    }

    /** Connects and sends {@code register} with this id and capacity. */
    static FakeWorker register(InetSocketAddress address, String workerId, int capacity) throws IOException {
        FakeWorker worker = connect(address);
        worker.send(new Message.Register(workerId, capacity));
        worker.workerId = workerId;
        return worker;
    }

    /** Connects and sends this {@code register} frame. */
    static FakeWorker register(InetSocketAddress address, Message.Register register) throws IOException {
        FakeWorker worker = connect(address);
        worker.send(register);
        worker.workerId = register.workerId();
        return worker;
    }

    /** A frame holding these JSON bytes as they are, valid or not. */
    static byte[] frame(String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
    }

    String workerId() {
        return workerId;
    }

    Socket socket() {
        return socket;
    }

    // ------------------------------------------------------------------ sending

    void send(Message message) throws IOException {
        stream.send(message);
    }

    /** Writes bytes as they are, framed or not. */
    void sendRaw(byte[] bytes) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(bytes);
        out.flush();
    }

    /** Writes bytes one at a time, each in its own TCP segment as far as the stack allows. */
    void dribble(byte[] bytes) throws IOException {
        OutputStream out = socket.getOutputStream();
        for (byte b : bytes) {
            out.write(b);
            out.flush();
        }
    }

    /** Answers a job with {@link TestJobs#echo(Job)}. */
    void answer(Job job) throws IOException {
        answer(TestJobs.echo(job));
    }

    /** Sends a result. Counts the job as answered before sending, so the count never lags the wire. */
    void answer(JobOutcome outcome) throws IOException {
        outstanding.decrementAndGet();
        send(new Message.Result(outcome));
    }

    /** Sends {@code failed} for a job. */
    void fail(JobId jobId, String error, boolean retryable) throws IOException {
        outstanding.decrementAndGet();
        send(new Message.Failed(jobId, error, retryable));
    }

    /** Sends {@code failed} for a job with a scope, as a current worker does. */
    void fail(JobId jobId, String error, FailureScope scope) throws IOException {
        outstanding.decrementAndGet();
        send(Message.Failed.of(jobId, error, scope));
    }

    /** Sends a heartbeat every interval from a background thread until closed. */
    void heartbeatEvery(long intervalMs) {
        heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fake-worker-" + workerId + "-heartbeat");
            t.setDaemon(true);
            return t;
        });
        heartbeats.scheduleAtFixedRate(() -> {
            try {
                send(new Message.Heartbeat(workerId));
            } catch (IOException e) {
                heartbeats.shutdown();
            }
        }, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    // ------------------------------------------------------------------ receiving, step by step

    /** The next frame, including heartbeats; empty at the end of the stream. */
    Optional<Message> recv() throws IOException {
        Optional<Message> message = stream.recv();
        message.ifPresent(this::noteReceived);
        return message;
    }

    /** The next frame that is neither a heartbeat nor {@code registered}. */
    Message nextInteresting() throws IOException {
        while (true) {
            Message m = recv().orElseThrow(() -> new IOException("the coordinator closed the connection of "
                    + workerId + " while the test waited for a frame"));
            if (!(m instanceof Message.Heartbeat) && !(m instanceof Message.Registered)) {
                return m;
            }
        }
    }

    /** The next assign; fails when something else of interest comes first. */
    Job nextAssign() throws IOException {
        Message m = nextInteresting();
        if (!(m instanceof Message.Assign assign)) {
            throw new AssertionError("worker " + workerId + " expected an assign, got " + m);
        }
        return assign.job();
    }

    /**
     * Reads the next assign and everything up to the coordinator heartbeat after it, which a
     * coordinator sends only after an interval without sending anything else: every assign it
     * meant to send by then has arrived before it. Heartbeats before the first assign are
     * skipped: one may cross an answer the coordinator has not read yet, and says nothing
     * about what it will send once it has.
     *
     * @return the assigns received on the way, at least one
     */
    List<Job> assignsUntilHeartbeat() throws IOException {
        List<Job> jobs = new java.util.ArrayList<>();
        while (true) {
            Message m = recv().orElseThrow(() -> new IOException("the coordinator closed the connection of "
                    + workerId + " while the test waited for a heartbeat"));
            if (m instanceof Message.Heartbeat && !jobs.isEmpty()) {
                return jobs;
            }
            if (m instanceof Message.Assign assign) {
                jobs.add(assign.job());
            }
        }
    }

    /**
     * Reads until the coordinator closes the connection.
     *
     * @return the reason of a {@code rejected} frame seen on the way, if any
     * @throws IOException when the connection is still open after the read timeout
     */
    Optional<String> readUntilClosed() throws IOException {
        String reason = null;
        while (true) {
            Optional<Message> m;
            try {
                m = recv();
            } catch (SocketTimeoutException e) {
                throw e;
            } catch (IOException e) {
                // A reset is a close too.
                return Optional.ofNullable(reason);
            }
            if (m.isEmpty()) {
                return Optional.ofNullable(reason);
            }
            if (m.get() instanceof Message.Rejected rejected) {
                reason = rejected.reason();
            }
        }
    }

    private void noteReceived(Message m) {
        received.add(m);
        if (m instanceof Message.Assign assign) {
            assigned.add(assign.job());
            int now = outstanding.incrementAndGet();
            maxOutstanding.accumulateAndGet(now, Math::max);
        }
    }

    // ------------------------------------------------------------------ receiving, in the background

    /** Serves assigns on a background thread with the handler until the connection ends. */
    FakeWorker serve(AssignHandler handler) {
        return serveMessages((worker, m) -> {
            if (m instanceof Message.Assign assign) {
                handler.onAssign(worker, assign.job());
            }
        });
    }

    /** Hands every frame received to the handler on a background thread until the connection ends. */
    FakeWorker serveMessages(MessageHandler handler) {
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Optional<Message> m = recv();
                    if (m.isEmpty()) {
                        endOfStream = true;
                        return;
                    }
                    handler.onMessage(this, m.get());
                }
            } catch (SocketTimeoutException e) {
                // Quiet for the read timeout: keep the socket, stop serving.
                serveFailure = e;
            } catch (IOException e) {
                endOfStream = true;
                if (!socket.isClosed()) {
                    serveFailure = e;
                }
            }
        }, "fake-worker-" + workerId);
        t.setDaemon(true);
        server = t;
        t.start();
        return this;
    }

    /** True once the serving thread saw the coordinator end the connection. */
    boolean sawEndOfStream() {
        return endOfStream;
    }

    /** Why the serving thread stopped early, or null. */
    Throwable serveFailure() {
        return serveFailure;
    }

    int outstanding() {
        return outstanding.get();
    }

    int maxOutstanding() {
        return maxOutstanding.get();
    }

    /** Every job assigned so far, in arrival order. */
    List<Job> assigned() {
        return assigned;
    }

    /** Every frame received so far, in order. */
    List<Message> received() {
        return received;
    }

    /** Drops the connection abruptly (like a crash); the serving thread ends. */
    @Override
    public void close() throws IOException {
        if (heartbeats != null) {
            heartbeats.shutdownNow();
        }
        socket.close();
        Thread t = server;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "FakeWorker[" + workerId + ", " + socket.getLocalSocketAddress() + "]";
    }
}
