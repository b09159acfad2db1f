package dev.panoptes.admin;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The parts of an HTTP/1.x request that {@link AdminServer} looks at, read from the connection with
 * the limits that keep one client from holding a thread or memory: the request line and headers
 * within {@value #MAX_HEAD_BYTES} bytes, a body (none is expected) within {@value #MAX_BODY_BYTES}.
 * Read on the admin pool's thread that serves the connection.
 */
record AdminRequest(String method, String path, String authorization) {
    /** The request line and headers together; scrapers send a few hundred bytes. */
    static final int MAX_HEAD_BYTES = 8 * 1024;
    /** A request body is read (and dropped) up to this size, so that its answer is not lost to a reset. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    /**
     * Reads the request line and headers, and drops a small body.
     *
     * @throws BadRequest  when the request is malformed, too large or not HTTP/1.x
     * @throws EOFException when the client closed before the end of the headers
     */
    static AdminRequest read(InputStream in) throws IOException {
        String[] lines = headLines(in);
        String[] parts = lines[0].split(" ", -1);
        if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty()) {
            throw new BadRequest(400, "malformed request line; expected for example 'GET /metrics HTTP/1.1'");
        }
        if (!parts[2].startsWith("HTTP/")) {
            throw new BadRequest(400, "malformed request line: no HTTP version");
        }
        if (!parts[2].equals("HTTP/1.1") && !parts[2].equals("HTTP/1.0")) {
            throw new BadRequest(505, "only HTTP/1.0 and HTTP/1.1, got " + parts[2]);
        }
        String authorization = null;
        long contentLength = 0;
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            int colon = line.indexOf(':');
            if (line.startsWith(" ") || line.startsWith("\t") || colon <= 0
                    || line.substring(0, colon).chars().anyMatch(c -> c <= ' ')) {
                throw new BadRequest(400, "malformed header line " + i);
            }
            String name = line.substring(0, colon).toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).strip();
            switch (name) {
                case "authorization" -> {
                    if (authorization != null) {
                        throw new BadRequest(400, "more than one Authorization header");
                    }
                    authorization = value;
                }
                case "content-length" -> contentLength = contentLength(value);
                case "transfer-encoding" -> throw new BadRequest(413, "a request body is not expected here");
                default -> {
                    // Host, Accept, User-Agent...: nothing here depends on them.
                }
            }
        }
        if (contentLength > MAX_BODY_BYTES) {
            throw new BadRequest(413, "a request body is not expected here");
        }
        in.skipNBytes(contentLength);
        return new AdminRequest(parts[0], path(parts[1]), authorization);
    }

    private static long contentLength(String value) throws BadRequest {
        try {
            long n = Long.parseLong(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Falls through to the refusal.
        }
        throw new BadRequest(400, "malformed Content-Length");
    }

    /** The path of an origin-form ({@code /metrics?x}) or absolute-form target. */
    private static String path(String target) throws BadRequest {
        if (target.startsWith("/")) {
            int end = target.length();
            for (char c : new char[] {'?', '#'}) {
                int i = target.indexOf(c);
                if (i >= 0 && i < end) {
                    end = i;
                }
            }
            return target.substring(0, end);
        }
        try {
            URI uri = new URI(target);
            if (uri.isAbsolute() && uri.getRawPath() != null) {
                return uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            }
        } catch (URISyntaxException e) {
            // Falls through to the refusal.
        }
        throw new BadRequest(400, "malformed request target; expected for example /metrics");
    }

    /** The request line and header lines, without the blank line that ends them. */
    private static String[] headLines(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream(512);
        int previous = -1;
        boolean started = false;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the client closed the connection before the end of its request headers");
            }
            if (!started && (b == '\r' || b == '\n')) {
                // RFC 9112: blank lines before the request line are ignored.
                continue;
            }
            started = true;
            if (b == '\n' && previous == '\n') {
                break;
            }
            if (b != '\r') {
                head.write(b);
                previous = b;
            }
            if (head.size() > MAX_HEAD_BYTES) {
                throw new BadRequest(431, "the request line and headers exceed " + MAX_HEAD_BYTES + " bytes");
            }
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        return text.substring(0, text.length() - 1).split("\n", -1);
    }

    /** A request that cannot be answered as asked, with the status that says why. */
    static final class BadRequest extends IOException {
        private static final long serialVersionUID = 1L;
        final int code;

        BadRequest(int code, String message) {
            super(message);
            this.code = code;
        }
    }
}
