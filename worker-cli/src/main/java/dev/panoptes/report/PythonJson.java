package dev.panoptes.report;

import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A value as Python's {@code json.dumps(value, ensure_ascii=False)} writes it, byte for byte:
 * {@link #dumps} with {@code indent=2}, as lm-evaluation-harness writes its results file and
 * hashes a document ({@link LmEvalSamples}' {@code doc_hash}), and {@link #dumpsLine} on one line,
 * as it writes each sample. With an indent: two spaces a level, no space at a line's end,
 * {@code {}} and {@code []} when empty; on one line: {@code ", "} between items. Always
 * {@code ": "} after a key, non-ASCII characters as they are, and control characters escaped as
 * Python escapes them ({@code \n}, or {@code \u001f} in lower case).
 *
 * <p>Takes maps (in their iteration order), lists, strings, booleans, null, integers and doubles.
 * A double is written as Python's {@code repr} writes a float ({@code 1.0}, {@code 1e-05},
 * {@code 1e+16}); one whose shortest decimal form Java 17 prints differently from Python (a few
 * values with 17 significant digits) may hash differently. Stateless and thread-safe.
 */
final class PythonJson {
    private static final String INDENT = "  ";

    private PythonJson() {
    }

    /**
     * {@code json.dumps(value, indent=2, ensure_ascii=False)}.
     *
     * @throws IllegalArgumentException for a type JSON has no form for
     */
    static String dumps(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value, 0);
        return out.toString();
    }

    /**
     * {@code json.dumps(value, ensure_ascii=False)}: one line.
     *
     * @throws IllegalArgumentException as {@link #dumps} does
     */
    static String dumpsLine(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value, -1);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value, int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (value instanceof Double || value instanceof Float) {
            out.append(floatRepr(((Number) value).doubleValue()));
        } else if (value instanceof Number n) {
            out.append(n instanceof BigDecimal d ? d.toPlainString() : n.toString());
        } else if (value instanceof Map<?, ?> map) {
            object(out, map, depth);
        } else if (value instanceof List<?> list) {
            array(out, list, depth);
        } else {
            throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
        }
    }

    private static void object(StringBuilder out, Map<?, ?> map, int depth) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            separate(out, first, depth);
            string(out, String.valueOf(entry.getKey()));
            out.append(": ");
            write(out, entry.getValue(), deeper(depth));
            first = false;
        }
        close(out, depth, '}');
    }

    private static void array(StringBuilder out, List<?> list, int depth) {
        if (list.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        boolean first = true;
        for (Object item : list) {
            separate(out, first, depth);
            write(out, item, deeper(depth));
            first = false;
        }
        close(out, depth, ']');
    }

    /** Depth -1 is the one-line form, and stays so. */
    private static int deeper(int depth) {
        return depth < 0 ? depth : depth + 1;
    }

    private static void separate(StringBuilder out, boolean first, int depth) {
        if (depth < 0) {
            out.append(first ? "" : ", ");
        } else {
            out.append(first ? "" : ",").append('\n').append(INDENT.repeat(depth + 1));
        }
    }

    private static void close(StringBuilder out, int depth, char bracket) {
        if (depth >= 0) {
            out.append('\n').append(INDENT.repeat(depth));
        }
        out.append(bracket);
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** Python's repr of a float: positional from 1e-4 up to below 1e16, else d.ddde+XX. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal shortest = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        // The decimal exponent of the leading digit: d = m.mmm * 10^exponent.
        int exponent = shortest.precision() - shortest.scale() - 1;
        if (exponent >= -4 && exponent < 16) {
            String plain = shortest.toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        String digits = shortest.unscaledValue().abs().toString();
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return (d < 0 ? "-" : "") + mantissa + "e" + (exponent < 0 ? "-" : "+")
                + String.format(Locale.ROOT, "%02d", Math.abs(exponent));
    }
}
