package dev.panoptes.control;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Strips what may authenticate from URLs before they are printed, logged, labelled or sent: the
 * user info ({@code user:password@}), the query ({@code ?api-key=...}, {@code ?key=...},
 * {@code ?token=...}, or any other) and the fragment. What is left, {@code scheme://host:port/path},
 * still names the API, which is what a log line, a metric label or the coordinator's rate governor
 * needs. A secret in the path itself cannot be told from a path segment and is kept.
 *
 * <p>Works on text, not on {@link java.net.URI}: a URL that does not parse (a space in a
 * password, say) is exactly the one an error message would otherwise repeat verbatim.
 *
 * <p>Stateless; any thread.
 */
public final class Redaction {
    /** A URL inside free text: a scheme, "://", and everything up to the next white space. */
    private static final Pattern URL_IN_TEXT = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://\\S*");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*://");

    private Redaction() {
    }

    /**
     * The URL without user info, query and fragment: {@code http://user:secret@api:8000/v1?key=K#x}
     * becomes {@code http://api:8000/v1}. Text without a {@code scheme://} is treated the same way
     * (everything from the first {@code ?} or {@code #} goes, and anything up to an {@code @}
     * before the first {@code /}), since it was meant as a URL. Idempotent.
     *
     * @param url a URL as given, parseable or not; null for none
     * @return the redacted URL, or null when {@code url} is null
     */
    public static String url(String url) {
        if (url == null) {
            return null;
        }
        int end = url.length();
        int query = url.indexOf('?');
        if (query >= 0) {
            end = query;
        }
        int fragment = url.indexOf('#');
        if (fragment >= 0 && fragment < end) {
            end = fragment;
        }
        String kept = url.substring(0, end);
        Matcher scheme = SCHEME.matcher(kept);
        int authorityStart = scheme.find() ? scheme.end() : 0;
        int slash = kept.indexOf('/', authorityStart);
        int authorityEnd = slash < 0 ? kept.length() : slash;
        // RFC 3986: the user info ends at the last '@' of the authority.
        int at = kept.lastIndexOf('@', authorityEnd - 1);
        if (at >= authorityStart) {
            kept = kept.substring(0, authorityStart) + kept.substring(at + 1);
        }
        return kept;
    }

    /**
     * The text with every URL in it ({@code scheme://} up to the next white space) passed through
     * {@link #url(String)}; the rest of the text unchanged.
     *
     * @param text any text; null for none
     * @return the redacted text, or null when {@code text} is null
     */
    public static String urlsIn(String text) {
        if (text == null || text.indexOf("://") < 0) {
            return text;
        }
        Matcher m = URL_IN_TEXT.matcher(text);
        StringBuilder out = new StringBuilder(text.length());
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(url(m.group())));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * Labels (a worker's {@code register} labels, for example {@code endpoint}) with every URL in
     * their values redacted by {@link #urlsIn(String)}; keys and other values unchanged, order kept.
     *
     * @param labels labels; null for none
     * @return a new unmodifiable map; empty when {@code labels} is null or empty
     * @throws NullPointerException when a key or a value is null
     */
    public static Map<String, String> labels(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : labels.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new NullPointerException("label " + e.getKey() + " has a null key or value");
            }
            out.put(e.getKey(), urlsIn(e.getValue()));
        }
        return Collections.unmodifiableMap(out);
    }
}
