package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;

/**
 * Typed reads of one field's value from a Jackson token stream, strict about JSON types: a value
 * of the wrong type is a {@link Fault} that names the field's path ({@code .job.spec.name}) and
 * what it got. JSON {@code null} reads as absent, as PROTOCOL.md has it, so a required field is
 * checked with {@link #require} once its object has ended.
 *
 * <p>The path is taken from the parser's own context at the moment of the fault, so reading a
 * valid frame builds no path strings. Each value reader expects the parser on the field's name
 * (or, for array items, on the previous item) and leaves it on the value it read.
 *
 * <p>Stateless but for {@link #repeatedText}'s small cache of short strings, which any thread
 * may use (lock-free); the parser belongs to the calling thread.
 */
final class FieldReader {
    private FieldReader() {
    }

    /**
     * A frame or line that does not have the protocol's shape. The message is relative to the
     * value being decoded (".capacity must be an integer, got a string", " has no \"id\" field"):
     * the caller puts the frame's type or the line's name in front. No stack trace: in the
     * first, single pass it only says "read this again the careful way".
     */
    static final class Fault extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Fault(String relativeMessage) {
            super(relativeMessage, null, false, false);
        }
    }

    /** A string, or null for JSON null. */
    static String text(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        return t == JsonToken.VALUE_NULL ? null : wrongType(p, t, "a string");
    }

    /** Strings read by {@link #repeatedText}, by a hash of their characters; see there. */
    private static final String[] REPEATED = new String[64];
    /** Longer values are not looked up: the texts that repeat from answer to answer are short names. */
    private static final int REPEATED_MAX_CHARS = 48;

    /**
     * As {@link #text}, for a field whose few values come again and again (an answer's model
     * name, its finish reason): a value read lately, by any thread, is returned as that same
     * {@link String} instead of a new one, which on the coordinator saved two strings per answer.
     * Lock-free: a slot holds whichever value was written to it last; a reader that sees a
     * {@code String} sees it whole (its fields are final), and a lost write only costs a miss.
     */
    static String repeatedText(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.VALUE_STRING) {
            return t == JsonToken.VALUE_NULL ? null : wrongType(p, t, "a string");
        }
        int length = p.getTextLength();
        if (length > REPEATED_MAX_CHARS) {
            return p.getText();
        }
        char[] chars = p.getTextCharacters();
        int offset = p.getTextOffset();
        int h = 0;
        for (int i = 0; i < length; i++) {
            h = 31 * h + chars[offset + i];
        }
        int slot = (h ^ (h >>> 16)) & (REPEATED.length - 1);
        String known = REPEATED[slot];
        if (known != null && known.length() == length) {
            boolean same = true;
            for (int i = 0; i < length && same; i++) {
                same = known.charAt(i) == chars[offset + i];
            }
            if (same) {
                return known;
            }
        }
        String read = new String(chars, offset, length);
        REPEATED[slot] = read;
        return read;
    }

    /** An integer (one beyond a long is clamped to its range), or null for JSON null. */
    static Long integer(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NUMBER_INT) {
            return longValue(p);
        }
        return t == JsonToken.VALUE_NULL ? null : wrongType(p, t, "an integer");
    }

    /** Any number, or null for JSON null. */
    static Double number(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
            return p.getDoubleValue();
        }
        return t == JsonToken.VALUE_NULL ? null : wrongType(p, t, "a number");
    }

    /** A boolean, or null for JSON null. */
    static Boolean bool(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE) {
            return t == JsonToken.VALUE_TRUE;
        }
        return t == JsonToken.VALUE_NULL ? null : wrongType(p, t, "a boolean");
    }

    /** True on the start of an object, false for JSON null. */
    static boolean object(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.START_OBJECT) {
            return true;
        }
        return t == JsonToken.VALUE_NULL ? false : wrongType(p, t, "an object");
    }

    /** True on the start of an array, false for JSON null; {@code expected} names what belongs there. */
    static boolean array(JsonParser p, String expected) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.START_ARRAY) {
            return true;
        }
        return t == JsonToken.VALUE_NULL ? false : wrongType(p, t, expected);
    }

    /** True on the start of the array's next object, false at its end. */
    static boolean nextObject(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.START_OBJECT) {
            return true;
        }
        return t == JsonToken.END_ARRAY ? false : wrongType(p, t, "an object");
    }

    /** The array's next string, or null at its end. */
    static String nextText(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        return t == JsonToken.END_ARRAY ? null : wrongType(p, t, "a string");
    }

    /** Skips a field's value, whatever it holds. */
    static void skip(JsonParser p) throws IOException {
        p.nextToken();
        p.skipChildren();
    }

    /**
     * A required field's value, checked with the parser on the end of the object that holds it.
     *
     * @throws Fault saying the object has no such field, when {@code value} is null
     */
    static <T> T require(JsonParser p, T value, String name) {
        if (value == null) {
            throw new Fault(path(p.getParsingContext()) + " has no \"" + name + "\" field");
        }
        return value;
    }

    /** The fault for a field whose value is JSON null where a value is required (an object's entry). */
    static Fault missingEntry(JsonParser p) {
        JsonStreamContext entry = p.getParsingContext();
        return new Fault(path(entry.getParent()) + " has no \"" + entry.getCurrentName() + "\" field");
    }

    /** Clamps to an int, as PROTOCOL.md has integers beyond a field's range read. */
    static int clampToInt(long value) {
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
    }

    private static long longValue(JsonParser p) throws IOException {
        if (p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            return p.getLongValue();
        }
        return p.getBigIntegerValue().signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }

    /** Never returns: typed so that a reader can end with it. */
    private static <T> T wrongType(JsonParser p, JsonToken t, String expected) {
        throw new Fault(path(valueContext(p, t)) + " must be " + expected + ", got " + describe(t));
    }

    /**
     * The context whose current name or index is the value just read: a container's start has
     * already opened the container's own context, so its parent's is the one that names it.
     */
    private static JsonStreamContext valueContext(JsonParser p, JsonToken t) {
        JsonStreamContext c = p.getParsingContext();
        return t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY ? c.getParent() : c;
    }

    /** ".job.spec.vignettes[0]": the value {@code c} is on, from the root value down. */
    static String path(JsonStreamContext c) {
        if (c == null || c.inRoot()) {
            return "";
        }
        String parent = path(c.getParent());
        return c.inArray() ? parent + "[" + c.getCurrentIndex() + "]" : parent + "." + c.getCurrentName();
    }

    /** "an integer": a token's JSON type, as error messages name it. */
    static String describe(JsonToken t) {
        if (t == null) {
            return "nothing";
        }
        return switch (t) {
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> t.name().toLowerCase(java.util.Locale.ROOT);
        };
    }
}
