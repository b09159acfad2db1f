package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link TextCompletions} reads of a {@code /completions} answer with prompt
 * log-probabilities, read in one streaming pass: per choice its {@code index} and its
 * {@code logprobs}' {@code token_logprobs}, {@code text_offset} and {@code top_logprobs} as
 * arrays of numbers; the answer's {@code model} and {@code usage} as trees. The {@code tokens}
 * and {@code text} of every choice, most of such an answer, are skipped without being kept, and
 * no tree of the whole body is made: that tree cost ~190 KB and ~50 us per 12 KB answer of four
 * choices (BENCHMARKS.md section 8).
 *
 * <p>Every value reads as it read from a tree ({@link JsonNode#asInt()},
 * {@link JsonNode#asDouble()}, {@link JsonNode#isNumber()}): numbers directly, any other
 * scalar through a one-node tree, so that the checks of {@link TextCompletions} decide as
 * before. A repeated field counts once, the last, as in a tree. Not thread-safe: made and read
 * on one thread, the one that ends the attempt.
 */
final class TextCompletionAnswer {
    /** The body's top level was an object. */
    boolean isObject;
    /** The {@code choices}, null unless it was an array. */
    List<Choice> choices;
    JsonNode model;
    JsonNode usage;

    /** One element of {@code choices}. */
    static final class Choice {
        /** Its {@code index} as a tree would give it with {@code asInt()}, or null when it has none. */
        Integer index;
        /** Its {@code logprobs}, null when absent, null or not an object (or the choice not an object). */
        Logprobs logprobs;
    }

    /** A choice's {@code logprobs} object. */
    static final class Logprobs {
        /** {@code token_logprobs}, null unless it was an array. */
        Values values;
        /** {@code text_offset} read with {@code asInt()}, null unless it was an array. */
        int[] offsets;
        /** {@code top_logprobs}, null unless it was an array. */
        Tops tops;
        /** The size of {@code content} as {@code JsonNode.size()} gives it (0 unless array or object). */
        int contentSize;
    }

    /** {@code token_logprobs}: which are numbers, which are JSON nulls, and the numbers' values. */
    static final class Values {
        int size;
        double[] value = new double[16];
        boolean[] number = new boolean[16];
        boolean[] isNull = new boolean[16];

        void add(double v, boolean isNumber, boolean isNullValue) {
            if (size == value.length) {
                value = java.util.Arrays.copyOf(value, size * 2);
                number = java.util.Arrays.copyOf(number, size * 2);
                isNull = java.util.Arrays.copyOf(isNull, size * 2);
            }
            value[size] = v;
            number[size] = isNumber;
            isNull[size] = isNullValue;
            size++;
        }
    }

    /**
     * {@code top_logprobs}, per token: whether it is a non-empty object, and the largest of its
     * values read with {@code asDouble()} (NaN left out: it is never larger).
     */
    static final class Tops {
        int size;
        boolean[] present = new boolean[16];
        double[] max = new double[16];

        void add(boolean isPresent, double largest) {
            if (size == present.length) {
                present = java.util.Arrays.copyOf(present, size * 2);
                max = java.util.Arrays.copyOf(max, size * 2);
            }
            present[size] = isPresent;
            max[size] = largest;
            size++;
        }
    }

    private TextCompletionAnswer() {
    }

    /**
     * Reads the whole body.
     *
     * @throws IOException when it is not well-formed JSON, or is empty (nothing to read)
     */
    static TextCompletionAnswer read(JsonParser parser) throws IOException {
        TextCompletionAnswer a = new TextCompletionAnswer();
        try (parser) {
            JsonToken root = parser.nextToken();
            if (root == null) {
                return a;
            }
            if (root != JsonToken.START_OBJECT) {
                parser.skipChildren();
                return a;
            }
            a.isObject = true;
            for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                JsonToken t = parser.nextToken();
                switch (name) {
                    case "choices":
                        a.choices = t == JsonToken.START_ARRAY ? choices(parser) : skip(parser);
                        break;
                    case "model":
                        a.model = parser.readValueAsTree();
                        break;
                    case "usage":
                        a.usage = parser.readValueAsTree();
                        break;
                    default:
                        parser.skipChildren();
                }
            }
        }
        return a;
    }

    private static <T> T skip(JsonParser parser) throws IOException {
        parser.skipChildren();
        return null;
    }

    private static List<Choice> choices(JsonParser parser) throws IOException {
        List<Choice> out = new ArrayList<>();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
            Choice c = new Choice();
            out.add(c);
            if (t != JsonToken.START_OBJECT) {
                parser.skipChildren();
                continue;
            }
            for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                JsonToken v = parser.nextToken();
                if ("index".equals(name)) {
                    c.index = asInt(parser, v);
                } else if ("logprobs".equals(name)) {
                    c.logprobs = v == JsonToken.START_OBJECT ? logprobs(parser) : skip(parser);
                } else {
                    parser.skipChildren();
                }
            }
        }
        return out;
    }

    private static Logprobs logprobs(JsonParser parser) throws IOException {
        Logprobs l = new Logprobs();
        for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
            JsonToken v = parser.nextToken();
            switch (name) {
                case "token_logprobs":
                    l.values = v == JsonToken.START_ARRAY ? values(parser) : skip(parser);
                    break;
                case "text_offset":
                    l.offsets = v == JsonToken.START_ARRAY ? offsets(parser) : skip(parser);
                    break;
                case "top_logprobs":
                    l.tops = v == JsonToken.START_ARRAY ? tops(parser) : skip(parser);
                    break;
                case "content":
                    l.contentSize = size(parser, v);
                    break;
                default:
                    parser.skipChildren();
            }
        }
        return l;
    }

    private static Values values(JsonParser parser) throws IOException {
        Values values = new Values();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
            if (t == JsonToken.VALUE_NUMBER_FLOAT || t == JsonToken.VALUE_NUMBER_INT) {
                values.add(parser.getDoubleValue(), true, false);
            } else {
                values.add(0, false, t == JsonToken.VALUE_NULL);
                parser.skipChildren();
            }
        }
        return values;
    }

    private static int[] offsets(JsonParser parser) throws IOException {
        int[] offsets = new int[16];
        int n = 0;
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
            if (n == offsets.length) {
                offsets = java.util.Arrays.copyOf(offsets, n * 2);
            }
            offsets[n++] = asInt(parser, t);
        }
        return java.util.Arrays.copyOf(offsets, n);
    }

    private static Tops tops(JsonParser parser) throws IOException {
        Tops tops = new Tops();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
            if (t != JsonToken.START_OBJECT) {
                parser.skipChildren();
                tops.add(false, Double.NEGATIVE_INFINITY);
                continue;
            }
            boolean any = false;
            double max = Double.NEGATIVE_INFINITY;
            for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                any = true;
                double v = asDouble(parser, parser.nextToken());
                if (v > max) {
                    max = v;
                }
            }
            tops.add(any, max);
        }
        return tops;
    }

    /** The current value as {@code JsonNode.asInt()} reads it; a container is skipped and reads 0. */
    private static int asInt(JsonParser parser, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() == JsonParser.NumberType.INT) {
            return parser.getIntValue();
        }
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            parser.skipChildren();
            return 0;
        }
        JsonNode n = parser.readValueAsTree();
        return n == null ? 0 : n.asInt();
    }

    /** The current value as {@code JsonNode.asDouble()} reads it; a container is skipped and reads 0. */
    private static double asDouble(JsonParser parser, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NUMBER_FLOAT || t == JsonToken.VALUE_NUMBER_INT) {
            return parser.getDoubleValue();
        }
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            parser.skipChildren();
            return 0;
        }
        JsonNode n = parser.readValueAsTree();
        return n == null ? 0 : n.asDouble();
    }

    /** The current value's size as {@code JsonNode.size()} gives it; the value is read to its end. */
    private static int size(JsonParser parser, JsonToken t) throws IOException {
        int n = 0;
        if (t == JsonToken.START_ARRAY) {
            for (JsonToken e = parser.nextToken(); e != JsonToken.END_ARRAY; e = parser.nextToken()) {
                parser.skipChildren();
                n++;
            }
        } else if (t == JsonToken.START_OBJECT) {
            for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                parser.nextToken();
                parser.skipChildren();
                n++;
            }
        }
        return n;
    }
}
