package dev.panoptes.eval.http;

import org.apache.hc.core5.http.Header;

/**
 * {@code Authorization: Bearer <key>}, which Apache HttpClient writes by its name and value
 * and which prints, in its header log at DEBUG, as {@code Authorization: Bearer [REDACTED]}:
 * the one place the API key leaves the client. Immutable; shared by every request of a client.
 */
final class AuthorizationHeader implements Header {
    private final String value;

    AuthorizationHeader(String apiKey) {
        this.value = "Bearer " + apiKey;
    }

    @Override
    public String getName() {
        return "Authorization";
    }

    @Override
    public String getValue() {
        return value;
    }

    @Override
    public boolean isSensitive() {
        return true;
    }

    @Override
    public String toString() {
        return "Authorization: Bearer " + Texts.MASK;
    }
}
