package dev.panoptes.bench.harness;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The line format parent and child JVMs speak over the child's stdin and stdout: a tag, then
 * {@code key=value} pairs separated by spaces ({@code RESULT k=64 jobs=123456}). Values never
 * hold spaces; a child replaces them. Immutable.
 *
 * @param tag    the first word of the line
 * @param values the pairs, in line order
 */
public record Kv(String tag, Map<String, String> values) {
    public Kv {
        values = Map.copyOf(values);
    }

    /** Parses a line; words without '=' are ignored after the tag. */
    public static Kv parse(String line) {
        String[] words = line.trim().split("\\s+");
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq > 0) {
                values.put(words[i].substring(0, eq), words[i].substring(eq + 1));
            }
        }
        return new Kv(words[0], values);
    }

    /** Formats a line from a tag and alternating keys and values. */
    public static String line(String tag, Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("keys and values must come in pairs: " + keysAndValues.length);
        }
        StringBuilder sb = new StringBuilder(tag);
        for (int i = 0; i < keysAndValues.length; i += 2) {
            sb.append(' ').append(keysAndValues[i]).append('=')
                    .append(String.valueOf(keysAndValues[i + 1]).replace(' ', '_'));
        }
        return sb.toString();
    }

    public String get(String key) {
        String v = values.get(key);
        if (v == null) {
            throw new IllegalStateException("line " + tag + " has no '" + key + "' in " + values);
        }
        return v;
    }

    public String get(String key, String fallback) {
        return values.getOrDefault(key, fallback);
    }

    public long longValue(String key) {
        return Long.parseLong(get(key));
    }

    public double doubleValue(String key) {
        return Double.parseDouble(get(key));
    }

    public int intValue(String key) {
        return Integer.parseInt(get(key));
    }
}
