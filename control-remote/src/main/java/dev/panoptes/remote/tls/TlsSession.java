package dev.panoptes.remote.tls;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * TLS over one non-blocking {@link SocketChannel}, through the JDK's {@link SSLEngine}: the
 * ciphertext and plaintext buffers and the handshake's state machine, so that an event loop
 * (the coordinator's {@code ConnectionTransport}, the worker's {@code WorkerSession}) keeps its own
 * framing, clocks and buffers, and only swaps {@code channel.read}/{@code channel.write} for
 * {@link #readNet()} + {@link #unwrap()} and {@link #write(ByteBuffer)} + {@link #flush()}.
 *
 * <p><b>Reading.</b> {@link #readNet()} reads ciphertext into a buffer of one or two TLS records;
 * then {@link #unwrap()} returns the plaintext of one record at a time (a view to consume fully
 * before the next call), or null when it needs more bytes, the handshake's delegated tasks are
 * running, or the peer closed. Handshake messages to send in reply are wrapped as it goes: call
 * {@link #flush()} when {@link #hasPendingOutput()} says so.
 *
 * <p><b>Writing.</b> As a {@link WritableByteChannel}, {@link #write(ByteBuffer)} takes plaintext
 * (an {@code OutboundBuffer} writes itself into it), wraps as much as fits in the ciphertext
 * buffer, writes that to the socket, and returns the plaintext it took: what it cannot take
 * stays with the caller, so backpressure is the caller's as before. No application data is
 * wrapped before the handshake is done.
 *
 * <p><b>Delegated tasks</b> (certificate checks, key agreement) run on the executor given, so that
 * an event loop with many connections never waits for them; when they finish, the executor's
 * thread calls the {@code onTasksDone} callback, which must only wake the owner, and the owner
 * resumes with {@link #unwrap()} and {@link #flush()}. With a null executor they run inline.
 * A session has at most one batch of tasks in flight: it unwraps nothing more until they are
 * done. When the executor refuses them (full, or shut down), the handshake fails with an
 * {@link SSLException} that says so, instead of running them on the owner's thread; and tasks
 * whose connection closed while they waited are dropped unrun, so that a peer gone away costs no
 * more handshake CPU.
 *
 * <p><b>Memory.</b> About three TLS records per connection (16.7 KiB each): one for plaintext,
 * one or two for ciphertext in, two for ciphertext out. A buffer grows only when the engine's
 * session says records are larger, never because of what a peer claims. Nothing is allocated
 * before it is needed, so that a peer which connects and sends nothing costs a few hundred bytes:
 * the ciphertext-in buffer comes with the first read ({@value #FIRST_READ_BYTES} bytes, enough
 * for a usual ClientHello, grown to a record when a record needs it), the ciphertext-out buffer
 * with the first handshake message to send, the plaintext buffer with the first application
 * data; and on the server's side the {@link SSLEngine} itself is made, and its handshake begun,
 * only when the client's first bytes have arrived. {@link #bufferBytes()} tells what is held.
 *
 * <p><b>Renegotiation</b> is refused: on a TLS 1.2 connection, a second handshake (which the JDK
 * accepts unless {@code jdk.tls.rejectClientInitiatedRenegotiation} is set for the whole JVM)
 * fails the session with an {@link SSLHandshakeException} before any of its work is done. TLS
 * 1.3 has no renegotiation; its key updates go through.
 *
 * <p><b>Threads.</b> Not thread-safe: one owner thread (a selector thread) calls everything,
 * except that {@link #isTaskRunning()} may be read anywhere; delegated tasks and
 * {@code onTasksDone} run on the task executor's thread.
 *
 * <p>Past 500 lines because the {@link SSLEngine} is one state machine: reading, unwrapping,
 * wrapping, delegated tasks, the renegotiation guard and closing all move the same engine and the
 * same three buffers, and splitting them would spread that state over classes that must change
 * together.
 */
public final class TlsSession implements WritableByteChannel {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** The ciphertext-in buffer's first size: a ClientHello of the JDK's fits; larger records grow it. */
    static final int FIRST_READ_BYTES = 1024;
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern CN = Pattern.compile("(?:^|,)\\s*CN=([^,]*)");
    /** The protocol versions that have renegotiation (TLS 1.3 has none). */
    private static final Set<String> RENEGOTIABLE = Set.of("TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3");

    /** Makes the engine; kept until it has (the server's end makes it on the client's first bytes). */
    private Supplier<SSLEngine> engineFactory;
    /** Null until made: a server's before the client's first bytes. */
    private SSLEngine engine;
    private final SocketChannel channel;
    private final Executor taskExecutor;
    private final Runnable onTasksDone;
    // Each buffer starts empty (capacity 0) and is allocated when first needed; see "Memory".
    /** Ciphertext received and not yet unwrapped, in fill mode. */
    private ByteBuffer netIn = ByteBuffer.allocate(0);
    /** The peer's first byte (0 to 255), or {@link #NOTHING_YET}; for {@link #peerSentPlaintext}. */
    private int firstInbound = NOTHING_YET;
    private static final int NOTHING_YET = -1;
    /** Ciphertext wrapped and not yet written, in fill mode. */
    private ByteBuffer netOut = ByteBuffer.allocate(0);
    /** Plaintext of the last record unwrapped. */
    private ByteBuffer appIn = ByteBuffer.allocate(0);
    private volatile boolean tasksRunning;
    private volatile RuntimeException taskFailure;
    private boolean handshakeDone;
    private boolean inboundDone;
    private long netBytesWritten;

    private TlsSession(Supplier<SSLEngine> engineFactory, SocketChannel channel, Executor taskExecutor,
                       Runnable onTasksDone) {
        this.engineFactory = engineFactory;
        this.channel = channel;
        this.taskExecutor = taskExecutor;
        this.onTasksDone = onTasksDone;
    }

    /** Makes the engine and begins its handshake, once. */
    private void startEngine() {
        if (engine != null) {
            return;
        }
        SSLEngine made = engineFactory.get();
        try {
            made.beginHandshake();
        } catch (SSLException e) {
            // Only a context without usable protocols or suites gets here: a configuration error.
            throw new IllegalArgumentException("cannot start a TLS handshake with this context: " + e.getMessage(), e);
        }
        engine = made;
        engineFactory = null;
    }

    /**
     * The coordinator's end of one accepted connection.
     *
     * @param requireClientCertificate true for mutual TLS: a client without a certificate the
     *                                 context's trust managers accept fails the handshake
     * @param taskExecutor             where delegated tasks run; null to run them inline
     * @param onTasksDone              called on the executor's thread when they finish: wake the owner
     */
    public static TlsSession server(SSLContext context, boolean requireClientCertificate, SocketChannel channel,
                                    Executor taskExecutor, Runnable onTasksDone) {
        // Made when the client's first bytes arrive: a peer that only connects never costs an engine.
        return new TlsSession(() -> {
            SSLEngine engine = context.createSSLEngine();
            engine.setUseClientMode(false);
            engine.setNeedClientAuth(requireClientCertificate);
            return engine;
        }, channel, taskExecutor, onTasksDone);
    }

    /**
     * The worker's end, checking that the server's certificate is for {@code host} (as an HTTPS
     * client does) and sending it as SNI when it is a name.
     */
    public static TlsSession client(SSLContext context, String host, int port, SocketChannel channel,
                                    Executor taskExecutor, Runnable onTasksDone) {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        if (!isIpLiteral(host)) {
            parameters.setServerNames(List.of(new SNIHostName(host)));
        }
        engine.setSSLParameters(parameters);
        // The client speaks first: its engine is made, and its ClientHello ready to flush, at once.
        TlsSession session = new TlsSession(() -> engine, channel, taskExecutor, onTasksDone);
        session.startEngine();
        return session;
    }

    /**
     * Reads what the socket has into the ciphertext buffer.
     *
     * @return the ciphertext bytes read (a sign of life), 0 when none (or no room until
     *         {@link #unwrap()} consumes some), -1 at the end of the stream
     */
    public int readNet() throws IOException {
        if (netIn.capacity() == 0) {
            netIn = ByteBuffer.allocate(FIRST_READ_BYTES);
        }
        if (!netIn.hasRemaining()) {
            return 0;
        }
        int n = channel.read(netIn);
        if (firstInbound == NOTHING_YET && netIn.position() > 0) {
            firstInbound = netIn.get(0) & 0xff;
        }
        return n;
    }

    /** True when the last {@link #readNet()} filled the ciphertext buffer: the socket may have more. */
    public boolean netInFull() {
        return netIn.capacity() > 0 && !netIn.hasRemaining();
    }

    /**
     * The bytes of the buffers this session holds now: 0 until the peer's first bytes (on the
     * server's side), then growing to about three TLS records. For tests and diagnostics.
     */
    public int bufferBytes() {
        return netIn.capacity() + netOut.capacity() + appIn.capacity();
    }

    /** True once the engine exists: at once on the client's side, at the first bytes on the server's. */
    boolean isEngineStarted() {
        return engine != null;
    }

    /**
     * Unwraps the next record's plaintext.
     *
     * @return the plaintext, to consume fully before the next call; null when nothing more can be
     *         unwrapped now (more bytes needed, tasks running, or the peer sent close_notify)
     * @throws SSLException when the handshake fails or the peer sends what is not TLS; the alert
     *                      for the peer, if any, has been written (best effort)
     */
    public ByteBuffer unwrap() throws SSLException {
        failIfTaskFailed();
        if (tasksRunning || inboundDone) {
            return null;
        }
        if (engine == null) {
            if (netIn.position() == 0) {
                return null;
            }
            startEngine();
        }
        appIn.clear();
        netIn.flip();
        try {
            while (true) {
                HandshakeStatus hs = engine.getHandshakeStatus();
                refuseRenegotiation(hs);
                if (hs == HandshakeStatus.NEED_TASK) {
                    if (!runTasks()) {
                        return plaintext();
                    }
                    continue;
                }
                if (hs == HandshakeStatus.NEED_WRAP) {
                    if (!wrapHandshake()) {
                        return plaintext();
                    }
                    continue;
                }
                if (!netIn.hasRemaining() && hs != HandshakeStatus.NEED_UNWRAP_AGAIN) {
                    return plaintext();
                }
                SSLEngineResult r = engine.unwrap(netIn, appIn);
                noteFinished(r);
                switch (r.getStatus()) {
                    case OK -> {
                        if (appIn.position() > 0) {
                            return plaintext();
                        }
                        if (r.bytesConsumed() == 0 && r.getHandshakeStatus() == hs) {
                            return plaintext();
                        }
                    }
                    case BUFFER_UNDERFLOW -> {
                        growNetInIfNeeded();
                        return plaintext();
                    }
                    case BUFFER_OVERFLOW -> {
                        if (appIn.position() > 0) {
                            return plaintext();
                        }
                        appIn = ByteBuffer.allocate(Math.max(appIn.capacity() * 2,
                                engine.getSession().getApplicationBufferSize()));
                    }
                    case CLOSED -> {
                        inboundDone = true;
                        return plaintext();
                    }
                    default -> throw new IllegalStateException("unknown SSLEngine status " + r.getStatus());
                }
            }
        } catch (SSLException e) {
            sendAlert(e);
            throw e;
        } finally {
            netIn.compact();
        }
    }

    /**
     * Wraps plaintext (after the handshake) and writes the ciphertext, as far as the socket takes it.
     *
     * @return the plaintext bytes taken from {@code src}; fewer than it holds when the socket is
     *         full or the handshake is not done yet
     */
    @Override
    public int write(ByteBuffer src) throws IOException {
        failIfTaskFailed();
        if (engine == null) {
            return 0; // a server that has heard nothing yet has nothing to say
        }
        int consumed = 0;
        try {
            while (!tasksRunning) {
                writeNet();
                HandshakeStatus hs = engine.getHandshakeStatus();
                refuseRenegotiation(hs);
                if (hs == HandshakeStatus.NEED_TASK) {
                    if (!runTasks()) {
                        break;
                    }
                    continue;
                }
                if (hs == HandshakeStatus.NEED_WRAP) {
                    if (!wrapHandshake()) {
                        break;
                    }
                    continue;
                }
                if (!handshakeDone || !src.hasRemaining()) {
                    break;
                }
                if (netOut.remaining() < engine.getSession().getPacketBufferSize()) {
                    if (netOut.position() > 0) {
                        break; // the socket took none of what waits: backpressure
                    }
                    netOut = ByteBuffer.allocate(2 * engine.getSession().getPacketBufferSize());
                }
                // Wrap as many records as fit, then write them in one call.
                while (src.hasRemaining() && netOut.remaining() >= engine.getSession().getPacketBufferSize()) {
                    SSLEngineResult r = engine.wrap(src, netOut);
                    noteFinished(r);
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        throw new SSLException("the TLS connection is closed; cannot send more");
                    }
                    consumed += r.bytesConsumed();
                    if (r.bytesConsumed() == 0) {
                        break;
                    }
                }
                if (netOut.position() > 0 && writeNet() == 0) {
                    break;
                }
            }
        } catch (SSLException e) {
            sendAlert(e);
            throw e;
        }
        return consumed;
    }

    /**
     * Wraps the handshake messages the engine has to send and writes every waiting byte of
     * ciphertext the socket takes.
     */
    public void flush() throws IOException {
        write(EMPTY);
        writeNet();
    }

    /** True when ciphertext waits for the socket, or the engine has handshake messages to wrap. */
    public boolean hasPendingOutput() {
        return netOut.position() > 0
                || (engine != null && !tasksRunning && engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP);
    }

    /** True when plaintext may be wrapped now: the handshake is done and no task is running. */
    public boolean canSendData() {
        return handshakeDone && !tasksRunning;
    }

    /** The ciphertext bytes written to the socket since the last call: write progress. */
    public long takeNetBytesWritten() {
        long n = netBytesWritten;
        netBytesWritten = 0;
        return n;
    }

    /** True once the first handshake has completed. */
    public boolean isHandshakeComplete() {
        return handshakeDone;
    }

    /** True while delegated tasks run on the executor. Any thread. */
    public boolean isTaskRunning() {
        return tasksRunning;
    }

    /** True once the peer sent close_notify: no more data will come. */
    public boolean isInboundDone() {
        return inboundDone;
    }

    /** The protocol and cipher suite agreed on, for logs ("TLSv1.3 TLS_AES_128_GCM_SHA256"). */
    public String describe() {
        if (engine == null) {
            return "no TLS session yet";
        }
        return engine.getSession().getProtocol() + " " + engine.getSession().getCipherSuite();
    }

    /**
     * The subject of the peer's verified certificate, or null when it presented none.
     */
    public X509Certificate peerCertificate() {
        if (engine == null) {
            return null;
        }
        try {
            Certificate[] chain = engine.getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x ? x : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    /** The common name (CN) of the peer's verified certificate, or null when it presented none. */
    public String peerCommonName() {
        X509Certificate cert = peerCertificate();
        if (cert == null) {
            return null;
        }
        Matcher m = CN.matcher(cert.getSubjectX500Principal().getName());
        return m.find() ? m.group(1) : cert.getSubjectX500Principal().getName();
    }

    /**
     * Sends close_notify (best effort, never waiting): the peer then knows the stream ended
     * where we meant it to.
     */
    public void closeOutbound() throws IOException {
        if (engine == null) {
            return; // nothing was exchanged: there is no session to end
        }
        engine.closeOutbound();
        if (!tasksRunning) {
            while (engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP && wrapHandshake()) {
                // wrap until the close_notify is out
                if (engine.isOutboundDone()) {
                    break;
                }
            }
        }
        writeNet();
    }

    @Override
    public boolean isOpen() {
        return channel.isOpen();
    }

    /** Closes the socket; the engine is dropped with it. */
    @Override
    public void close() throws IOException {
        channel.close();
    }

    /**
     * True when the peer's first byte cannot start a TLS connection (not a TLS handshake or alert
     * record, nor an SSLv2 hello): it speaks plaintext, such as a Panoptes frame's length prefix.
     * False before anything arrived. Owner's thread.
     */
    public boolean peerSentPlaintext() {
        int first = firstInbound;
        return first != NOTHING_YET && first != 0x16 && first != 0x15 && (first & 0x80) == 0;
    }

    /**
     * The reason of a TLS failure in words, without the JDK's class names: the message of the
     * deepest cause that says more than the alert ("PKIX path building failed ...: unable to
     * find valid certification path to requested target", "No subject alternative names matching
     * IP address 127.0.0.2 found", "Received fatal alert: certificate_unknown").
     */
    public static String reason(Throwable e) {
        String best = e.getMessage() == null ? e.toString() : e.getMessage();
        for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                best = t.getMessage();
            }
        }
        return best;
    }

    // ------------------------------------------------------------------ internals

    private ByteBuffer plaintext() {
        if (appIn.position() == 0) {
            return null;
        }
        appIn.flip();
        return appIn;
    }

    /** Wraps one handshake message into netOut; false when netOut has no room (flush first). */
    private boolean wrapHandshake() throws SSLException {
        int packet = engine.getSession().getPacketBufferSize();
        if (netOut.remaining() < packet) {
            if (netOut.position() > 0) {
                return false;
            }
            netOut = ByteBuffer.allocate(2 * packet);
        }
        SSLEngineResult r = engine.wrap(EMPTY, netOut);
        noteFinished(r);
        if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
            return false;
        }
        // Progress, or the engine moved on; never "true" for a wrap that changed nothing (no spinning).
        return r.bytesProduced() > 0 || r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP;
    }

    /**
     * Runs the engine's delegated tasks; true when they already ran (inline), false when they run elsewhere.
     *
     * @throws SSLException when the executor refuses them: the handshake cannot go on
     */
    private boolean runTasks() throws SSLException {
        List<Runnable> tasks = new ArrayList<>(2);
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            tasks.add(task);
        }
        if (taskExecutor == null) {
            tasks.forEach(Runnable::run);
            return true;
        }
        tasksRunning = true;
        try {
            taskExecutor.execute(() -> {
                try {
                    // A peer that went away, or timed out, while its tasks waited costs no more CPU.
                    if (channel.isOpen()) {
                        tasks.forEach(Runnable::run);
                    }
                } catch (RuntimeException e) {
                    taskFailure = e;
                } finally {
                    tasksRunning = false;
                    onTasksDone.run();
                }
            });
            return false;
        } catch (RejectedExecutionException e) {
            // Not inline: the owner is a selector thread serving many connections, and a refusal
            // means there is more handshake work than the executor takes. This one ends here.
            tasksRunning = false;
            throw new SSLException("the TLS handshake's tasks were refused: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a second handshake on a TLS 1.2 (or older) connection, what
     * {@code jdk.tls.rejectClientInitiatedRenegotiation} does JVM-wide, for this session only: the
     * engine left NOT_HANDSHAKING after the first handshake completed. Neither side of Panoptes
     * ever renegotiates, and a peer that could would demand a full handshake's CPU as often as it
     * liked. Checked before the new handshake's tasks run or its reply is wrapped, so it costs
     * nothing but the unwrap of the peer's hello. TLS 1.3 has no renegotiation: its post-handshake
     * messages (key updates, session tickets) go through.
     */
    private void refuseRenegotiation(HandshakeStatus hs) throws SSLException {
        if (!handshakeDone || hs == HandshakeStatus.NOT_HANDSHAKING || engine.isInboundDone()
                || engine.isOutboundDone()) {
            return;
        }
        String protocol = engine.getSession().getProtocol();
        if (!RENEGOTIABLE.contains(protocol)) {
            return;
        }
        throw new SSLHandshakeException("the peer at " + peer() + " started a TLS renegotiation on a " + protocol
                + " connection, which is refused (Panoptes never renegotiates; a renegotiation costs a whole"
                + " handshake of CPU that a peer could ask for again and again); closing the connection");
    }

    /** The remote address for messages, or "an unknown address" once the channel has none. */
    private String peer() {
        try {
            Object remote = channel.getRemoteAddress();
            return remote == null ? "an unknown address" : remote.toString();
        } catch (IOException e) {
            return "an unknown address";
        }
    }

    private void failIfTaskFailed() throws SSLException {
        RuntimeException failure = taskFailure;
        if (failure != null) {
            throw new SSLException("a TLS handshake task failed: " + failure, failure);
        }
    }

    private void noteFinished(SSLEngineResult r) {
        if (r.getHandshakeStatus() == HandshakeStatus.FINISHED) {
            handshakeDone = true;
        }
    }

    /** Makes room for a record larger than the buffer, as large as the session says records are. */
    private void growNetInIfNeeded() {
        // Called between flip and compact: the buffer holds only the unconsumed part of a record.
        int packet = engine.getSession().getPacketBufferSize();
        if (netIn.capacity() < packet) {
            ByteBuffer bigger = ByteBuffer.allocate(packet);
            bigger.put(netIn);
            bigger.flip();
            netIn = bigger;
        }
    }

    /** Writes waiting ciphertext without blocking; returns the bytes written. */
    private int writeNet() throws IOException {
        if (netOut.position() == 0) {
            return 0;
        }
        netOut.flip();
        int written = 0;
        try {
            while (netOut.hasRemaining()) {
                int n = channel.write(netOut);
                if (n <= 0) {
                    break;
                }
                written += n;
            }
        } finally {
            netOut.compact();
        }
        netBytesWritten += written;
        return written;
    }

    /**
     * After a failure, the engine may have an alert for the peer: wraps it and sends it, never
     * waiting, and adds any trouble doing so to {@code failure} as suppressed.
     */
    private void sendAlert(SSLException failure) {
        try {
            engine.closeOutbound();
            for (int i = 0; i < 4 && engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP; i++) {
                if (!wrapHandshake()) {
                    break;
                }
            }
            writeNet();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private static boolean isIpLiteral(String host) {
        return host.indexOf(':') >= 0 || IPV4.matcher(host).matches();
    }
}
