package dev.panoptes.eval.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A server on 127.0.0.1 that accepts connections, reads nothing, answers nothing and holds
 * them open until closed: the model server that hung. {@link #greeting(String)} makes one that
 * first writes fixed text to each connection: a plain HTTP server spoken to in TLS, whose answer
 * the client's TLS handshake cannot read.
 */
final class SilentServer implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private final byte[] greeting;

    SilentServer() {
        this(new byte[0]);
    }

    /** A server that writes {@code text} to every connection it accepts, then holds it open. */
    static SilentServer greeting(String text) {
        return new SilentServer(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private SilentServer(byte[] greeting) {
        this.greeting = greeting;
        try {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        acceptor = new Thread(() -> {
            while (!socket.isClosed()) {
                Socket s;
                try {
                    s = socket.accept();
                } catch (IOException e) {
                    return;
                }
                accepted.add(s);
                if (greeting.length > 0) {
                    try {
                        s.getOutputStream().write(greeting);
                        s.getOutputStream().flush();
                    } catch (IOException e) {
                        // The client hung up first: there is no one left to greet.
                    }
                }
            }
        }, "silent-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/v1");
    }

    /** The same server as an {@code https} base URL. */
    URI httpsBaseUrl() {
        return URI.create("https://127.0.0.1:" + socket.getLocalPort() + "/v1");
    }

    int port() {
        return socket.getLocalPort();
    }

    /** Connections accepted so far. */
    int connections() {
        return accepted.size();
    }

    /** Whether the client has sent something (its request) on the {@code i}th connection accepted. */
    boolean requestArrived(int i) throws IOException {
        return accepted.get(i).getInputStream().available() > 0;
    }

    /**
     * Whether the client closed (or reset) the {@code i}th connection accepted: reads, and
     * discards, what it sent until the end of the stream, or for at most 50 ms. Call from one
     * thread at a time.
     */
    boolean clientHungUp(int i) throws IOException {
        Socket s = accepted.get(i);
        s.setSoTimeout(50);
        byte[] buffer = new byte[8192];
        try {
            while (true) {
                if (s.getInputStream().read(buffer) < 0) {
                    return true;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            // A reset: the client aborted the connection.
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        for (Socket s : accepted) {
            s.close();
        }
    }
}
