package dev.panoptes.eval.http;

import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * An HTTP answer as this package reads it: status, headers and the body as text (in the
 * charset of its Content-Type, UTF-8 by default). Immutable: made on the I/O thread that read
 * the answer, read on whichever thread the exchange's future hands it to.
 */
final class Answer {
    private final HttpResponse head;
    private final String body;

    Answer(Message<HttpResponse, byte[]> message) {
        this.head = message.getHead();
        byte[] bytes = message.getBody();
        Charset charset = StandardCharsets.UTF_8;
        Header type = head.getFirstHeader("Content-Type");
        if (type != null) {
            try {
                Charset declared = ContentType.parse(type.getValue()).getCharset();
                if (declared != null) {
                    charset = declared;
                }
            } catch (RuntimeException e) {
                // An unknown or malformed charset: JSON is UTF-8 anyway.
            }
        }
        this.body = bytes == null ? "" : new String(bytes, charset);
    }

    int status() {
        return head.getCode();
    }

    String body() {
        return body;
    }

    /** The first value of a header, by case-insensitive name. */
    Optional<String> header(String name) {
        Header h = head.getFirstHeader(name);
        return h == null ? Optional.empty() : Optional.ofNullable(h.getValue());
    }
}
