package dev.panoptes.coordinator;

import dev.panoptes.control.DaemonThreads;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;

/**
 * What a standby coordinator ({@code coordinator --standby}) serves on its worker address while
 * another coordinator holds the run: every connection gets a {@code rejected} frame with
 * {@code retryable: true} saying so, and is closed, so that a worker given several
 * {@code --coordinator} addresses moves on to the next at once instead of waiting on this one. It
 * reads nothing of what the worker sends (it drains it, so that closing does not reset the
 * connection before the worker has read the frame).
 *
 * <p>Threads: one daemon thread accepts and answers, one connection at a time (each takes a round
 * trip: a worker closes on the frame). {@link #close()} from any thread; the port is free again
 * when it returns, for the worker server that takes it over.
 */
final class StandbyListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StandbyListener.class);
    /** How long a connection may take to close after its frame, before it is closed anyway. */
    private static final int DRAIN_MS = 2000;

    private final ServerSocket server;
    private final byte[] frame;
    private final Thread thread;

    private StandbyListener(ServerSocket server, byte[] frame) {
        this.server = server;
        this.frame = frame;
        this.thread = DaemonThreads.numbered("standby-listener").newThread(this::serve);
    }

    /**
     * Binds {@code bind} and starts answering.
     *
     * @throws IOException when the address cannot be bound (in use, say)
     */
    static StandbyListener start(InetSocketAddress bind, String runId) throws IOException {
        ServerSocket server = new ServerSocket();
        try {
            server.setReuseAddress(true);
            server.bind(bind.isUnresolved() ? new InetSocketAddress(bind.getHostString(), bind.getPort()) : bind);
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen for workers on " + CoordinatorRun.hostPort(bind) + ": "
                    + e.getMessage(), e);
        }
        byte[] frame = new MessageCodec().encodeFrame(new Message.Rejected("this is a standby coordinator: it does"
                + " not hold run " + runId + " (another coordinator does), and takes it over when that one's lock ends;"
                + " try the next --coordinator address", true));
        StandbyListener listener = new StandbyListener(server, frame);
        listener.thread.start();
        return listener;
    }

    /** Where it listens: the address the worker server binds once this standby holds the run. */
    InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    private void serve() {
        while (!server.isClosed()) {
            try (Socket s = server.accept()) {
                s.setSoTimeout(DRAIN_MS);
                s.getOutputStream().write(frame);
                s.shutdownOutput();
                InputStream in = s.getInputStream();
                byte[] sink = new byte[4096];
                while (in.read(sink) >= 0) {
                    // Drained until the worker closes, or the timeout.
                }
                log.debug("told worker at {} that this standby does not hold the run", s.getRemoteSocketAddress());
            } catch (SocketException e) {
                if (server.isClosed()) {
                    return;
                }
                log.debug("a worker's connection to the standby failed", e);
            } catch (IOException e) {
                log.debug("a worker's connection to the standby failed", e);
            }
        }
    }

    /** Stops listening and waits (briefly) for the connection being answered. Idempotent. */
    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            log.debug("closing the standby's listener failed", e);
        }
        try {
            thread.join(DRAIN_MS + 1000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
