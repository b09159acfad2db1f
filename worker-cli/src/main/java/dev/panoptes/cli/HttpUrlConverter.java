package dev.panoptes.cli;

import dev.panoptes.control.Redaction;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Converts an absolute {@code http} or {@code https} base URL with a host, such as
 * {@code http://localhost:8000/v1}, to a {@link URI}. User info (a password would be printed
 * wherever the URL is), query and fragment are refused: a key goes in {@code --api-key}. Error
 * messages repeat the value {@link Redaction#url redacted}, since a refused URL may be one that
 * carries a key. Reusable by any subcommand.
 */
public final class HttpUrlConverter implements ITypeConverter<URI> {
    /**
     * @throws TypeConversionException when the value is not an absolute http(s) URL with a host
     */
    @Override
    public URI convert(String value) {
        return parse(value);
    }

    /**
     * Parses an http(s) URL; usable outside picocli.
     *
     * @throws TypeConversionException when the value is not an absolute http(s) URL with a host
     */
    public static URI parse(String value) {
        String text = value == null ? "" : value.trim();
        String shown = "'" + Redaction.url(text) + "'" + (Redaction.url(text).equals(text) ? ""
                : " (its user info, query or fragment not repeated here)");
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new TypeConversionException("expected an http(s) URL such as http://localhost:8000/v1, got "
                    + shown + " (" + e.getReason() + " at index " + e.getIndex() + " of the value given)");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new TypeConversionException("expected an http(s) URL such as http://localhost:8000/v1, got " + shown);
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new TypeConversionException("URL " + shown + " has no host; expected for example"
                    + " http://localhost:8000/v1");
        }
        // A password in the URL would be printed wherever the URL is; keys go in --api-key.
        if (uri.getRawUserInfo() != null) {
            throw new TypeConversionException("URL must not contain a user name or password; give the key with"
                    + " --api-key or " + WorkerMain.API_KEY_ENV);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new TypeConversionException("URL " + shown + " must not have a query or fragment; give the"
                    + " base URL, such as http://localhost:8000/v1, and a key with --api-key or "
                    + WorkerMain.API_KEY_ENV);
        }
        return uri;
    }
}
