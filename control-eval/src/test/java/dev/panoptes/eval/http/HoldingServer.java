package dev.panoptes.eval.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A model server on 127.0.0.1 that reads each HTTP/1.1 request whole, then either answers it
 * with a chat completion on a keep-alive connection, or holds it: never answers, as a model
 * server that is still generating, and keeps reading the connection to see when the client gives
 * up on it. Which requests are answered is decided by their body. One thread per connection.
 */
final class HoldingServer implements AutoCloseable {
    private static final byte[] ANSWER_BODY = ("{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"done\"},"
            + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);

    private final ServerSocket socket;
    private final Predicate<String> answered;
    private final List<Connection> connections = new CopyOnWriteArrayList<>();

    /** @param answered whether to answer a request, by its body; the others are held */
    HoldingServer(Predicate<String> answered) {
        this.answered = answered;
        try {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "holding-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/v1");
    }

    /** Connections accepted so far. */
    int connections() {
        return connections.size();
    }

    /** Requests held so far, whether or not the client has since hung up on them. */
    int requestsHeld() {
        return (int) connections.stream().mapToLong(c -> c.held).sum();
    }

    /**
     * Connections on which a request is held and the client has not hung up: a model server
     * generating an answer that nobody will read.
     */
    int heldAndOpen() {
        return (int) connections.stream().filter(c -> c.held > 0 && !c.hungUp).count();
    }

    private void accept() {
        while (!socket.isClosed()) {
            Socket s;
            try {
                s = socket.accept();
            } catch (IOException e) {
                return;
            }
            Connection c = new Connection(s);
            connections.add(c);
            Thread t = new Thread(c::serve, "holding-server-" + connections.size());
            t.setDaemon(true);
            t.start();
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        for (Connection c : connections) {
            c.socket.close();
        }
    }

    private final class Connection {
        final Socket socket;
        /** Requests held on this connection; written by its thread only. */
        volatile int held;
        /** The connection is over: the client closed or reset it; written by its thread only. */
        volatile boolean hungUp;

        Connection(Socket socket) {
            this.socket = socket;
        }

        void serve() {
            try (socket) {
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                while (true) {
                    String head = readHead(in);
                    if (head == null) {
                        break;
                    }
                    int length = contentLength(head);
                    byte[] bytes = in.readNBytes(length);
                    if (bytes.length < length) {
                        // The client hung up halfway through its request.
                        break;
                    }
                    String body = new String(bytes, StandardCharsets.UTF_8);
                    if (answered.test(body)) {
                        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                + ANSWER_BODY.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.write(ANSWER_BODY);
                        out.flush();
                    } else {
                        held++;
                        // Whatever the client sends from now on is read and dropped, until it hangs up.
                        while (in.read() >= 0) {
                            // reading on
                        }
                        break;
                    }
                }
            } catch (SocketException e) {
                // A reset, or this server closing: either way the connection is over.
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                hungUp = true;
            }
        }

        /** The request line and headers, or null at the end of the stream. */
        private String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                if (b < 0) {
                    return null;
                }
                head.write(b);
                matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            return head.toString(StandardCharsets.US_ASCII);
        }

        private int contentLength(String head) {
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    return Integer.parseInt(line.substring("content-length:".length()).trim());
                }
            }
            return 0;
        }
    }
}
