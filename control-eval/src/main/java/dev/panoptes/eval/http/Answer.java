package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * An HTTP answer as this package reads it: status, headers and the body, as bytes for a JSON
 * parser and as text (in the charset of its Content-Type, UTF-8 by default) for messages.
 * Immutable: made on the I/O thread that read the answer, read on whichever thread the
 * exchange's future hands it to.
 */
final class Answer {
    private final HttpResponse head;
    private final byte[] bytes;
    private final Charset charset;

    Answer(Message<HttpResponse, byte[]> message) {
        this.head = message.getHead();
        byte[] bytes = message.getBody();
        Charset charset = StandardCharsets.UTF_8;
        Header type = head.getFirstHeader("Content-Type");
        // What OpenAI-compatible servers send, known without parsing it (parsing was 1 % of the
        // I/O thread's time per answer).
        if (type != null && !isPlainJson(type.getValue())) {
            try {
                Charset declared = ContentType.parse(type.getValue()).getCharset();
                if (declared != null) {
                    charset = declared;
                }
            } catch (RuntimeException e) {
                // An unknown or malformed charset: JSON is UTF-8 anyway.
            }
        }
        this.bytes = bytes == null ? new byte[0] : bytes;
        this.charset = charset;
    }

    private static boolean isPlainJson(String type) {
        return type != null && (type.equalsIgnoreCase("application/json")
                || type.equalsIgnoreCase("application/json; charset=utf-8"));
    }

    int status() {
        return head.getCode();
    }

    /**
     * The body as text. Decoded on each call, not when the answer arrives: a 2xx body is
     * parsed from its bytes ({@link #json}), and only messages about a failure need the text.
     */
    String body() {
        return new String(bytes, charset);
    }

    /**
     * A parser of the body, reading its bytes without a copy to text first when they are UTF-8
     * (or ASCII), as JSON is; from the decoded text in any other declared charset.
     *
     * @throws IOException when the parser cannot be made (never for an in-memory body in practice)
     */
    JsonParser json(ObjectMapper mapper) throws IOException {
        return charset.equals(StandardCharsets.UTF_8) || charset.equals(StandardCharsets.US_ASCII)
                ? mapper.createParser(bytes) : mapper.createParser(body());
    }

    /** The first value of a header, by case-insensitive name. */
    Optional<String> header(String name) {
        Header h = head.getFirstHeader(name);
        return h == null ? Optional.empty() : Optional.ofNullable(h.getValue());
    }
}
