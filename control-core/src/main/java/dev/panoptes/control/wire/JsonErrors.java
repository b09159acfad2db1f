package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Jackson's parse errors in plain words, for a person fixing a suite file: what is wrong, where
 * on the line, and the likely fix; never Jackson's internals ({@code [Source: REDACTED ...]},
 * {@code StreamReadConstraints}, character codes).
 *
 * <p>Stateless.
 */
final class JsonErrors {
    private static final Pattern UNEXPECTED_CHARACTER = Pattern.compile("^Unexpected character \\('(.+?)' \\(code \\d+\\)\\)");
    private static final Pattern UNRECOGNIZED_TOKEN = Pattern.compile("^Unrecognized token '(.*?)'");

    private JsonErrors() {
    }

    /** What went wrong, in words, with the column when Jackson knows it. */
    static String plain(JsonProcessingException e) {
        if (e instanceof StreamConstraintsException) {
            return "it holds a string of more than " + MessageCodec.MAX_STRING_CHARS + " characters, more than any"
                    + " vignette can be sent with; shorten it";
        }
        String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        String at = column(e.getLocation());
        if (original.startsWith("Unexpected end-of-input")) {
            if (original.contains("close marker for Object")) {
                return "the line ends before its object is closed: a '}' is missing";
            }
            if (original.contains("close marker for Array")) {
                return "the line ends before an array is closed: a ']' is missing";
            }
            if (original.contains("closing quote")) {
                return "the line ends inside a string: a closing '\"' is missing (a line break inside a string"
                        + " must be written \\n)";
            }
            return "the line ends too early: the object is not complete";
        }
        Matcher c = UNEXPECTED_CHARACTER.matcher(original);
        if (c.find()) {
            String found = c.group(1);
            if (original.contains("double-quote to start field name")) {
                return at + "expected a field name in double quotes, found '" + found + "'"
                        + ("}".equals(found) ? " (a comma before '}'?)" : " (field names take double quotes)");
            }
            if (original.contains("expected a valid value")) {
                return at + "expected a value (a string in double quotes, a number, true, false, null, an object or"
                        + " an array), found '" + found + "'" + ("'".equals(found) ? " (strings take double quotes)"
                        : "]".equals(found) ? " (a comma before ']'?)" : "");
            }
            if (original.contains("was expecting comma")) {
                return at + "expected a comma or the end of the object or array, found '" + found + "'";
            }
            if (original.contains("was expecting a colon")) {
                return at + "expected ':' after a field name, found '" + found + "'";
            }
            if (original.contains("CTRL-CHAR")) {
                return at + "a control character inside a string: write a tab as \\t and a line break as \\n";
            }
            return at + "unexpected '" + found + "'";
        }
        Matcher t = UNRECOGNIZED_TOKEN.matcher(original);
        if (t.find()) {
            return at + "'" + t.group(1) + "' is not a JSON value (text takes double quotes)";
        }
        if (original.startsWith("Trailing token")) {
            return at + "something follows the object: one vignette per line, nothing after it";
        }
        if (original.contains("Illegal unquoted character")) {
            return at + "a control character inside a string: write a tab as \\t and a line break as \\n";
        }
        if (original.contains("Unrecognized character escape")) {
            return at + "an unknown escape in a string: a backslash is written \\\\";
        }
        return at + firstClause(original);
    }

    /** "at column 12: ", or nothing when the column is not known. */
    private static String column(JsonLocation location) {
        return location == null || location.getColumnNr() < 1 ? "" : "at column " + location.getColumnNr() + ": ";
    }

    /** The message without Jackson's location and source suffixes. */
    private static String firstClause(String message) {
        String m = message;
        for (String cut : new String[] {" (start marker at", "\n at [Source", " at [Source"}) {
            int i = m.indexOf(cut);
            if (i >= 0) {
                m = m.substring(0, i);
            }
        }
        return m.trim();
    }
}
