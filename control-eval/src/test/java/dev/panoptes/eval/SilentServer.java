package dev.panoptes.eval;

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

    @Override
    public void close() throws IOException {
        socket.close();
        for (Socket s : accepted) {
            s.close();
        }
    }
}
