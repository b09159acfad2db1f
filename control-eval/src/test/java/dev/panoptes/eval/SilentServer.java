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
 * them open until closed: the model server that hung.
 */
final class SilentServer implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    SilentServer() {
        try {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        acceptor = new Thread(() -> {
            while (!socket.isClosed()) {
                try {
                    accepted.add(socket.accept());
                } catch (IOException e) {
                    return;
                }
            }
        }, "silent-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/v1");
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
