package dev.panoptes.worker;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Converts an absolute {@code http} or {@code https} base URL with a host, such as
 * {@code http://localhost:8000/v1}, to a {@link URI}. User info (a password would be printed
 * wherever the URL is), query and fragment are refused. Reusable by any subcommand.
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
        URI uri;
        try {
            uri = new URI(value == null ? "" : value.trim());
        } catch (URISyntaxException e) {
            throw new TypeConversionException("expected an http(s) URL such as http://localhost:8000/v1, got '"
                    + value + "' (" + e.getReason() + " at index " + e.getIndex() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new TypeConversionException("expected an http(s) URL such as http://localhost:8000/v1, got '"
                    + value + "'");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new TypeConversionException("URL '" + value + "' has no host; expected for example"
                    + " http://localhost:8000/v1");
        }
        // A password in the URL would be printed wherever the URL is; keys go in --api-key.
        if (uri.getRawUserInfo() != null) {
            throw new TypeConversionException("URL must not contain a user name or password; give the key with"
                    + " --api-key or " + WorkerMain.API_KEY_ENV);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new TypeConversionException("URL '" + value + "' must not have a query or fragment; give the"
                    + " base URL, such as http://localhost:8000/v1");
        }
        return uri;
    }
}
