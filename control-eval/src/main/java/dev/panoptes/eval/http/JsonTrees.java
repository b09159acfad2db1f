package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;

/**
 * The tree of one JSON value, read from a streaming parser: the same tree Jackson's
 * {@code ObjectMapper.readTree(JsonParser)} makes with its default settings (ints as int, long or
 * big-integer nodes by size, floats as doubles, a repeated field's last value in its first
 * place), without what each of its calls costs besides: a deserialization context made and its
 * root deserializer looked up, per value. The worker reads three such values of every answer (the
 * first choice, the model, the usage) on the model client's I/O thread.
 *
 * <p>Stateless; any thread.
 */
final class JsonTrees {
    private JsonTrees() {
    }

    /**
     * The value that starts at the parser's current token, the parser left at its last token
     * (as {@code readValueAsTree} leaves it).
     *
     * @throws IOException when the JSON is malformed or cut short, as the parser reports it
     */
    static JsonNode read(JsonParser p, JsonNodeFactory nodes) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            throw new com.fasterxml.jackson.core.JsonParseException(p, "no JSON value where one was expected");
        }
        switch (t) {
            case START_OBJECT: {
                ObjectNode object = nodes.objectNode();
                for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
                    p.nextToken();
                    object.replace(name, read(p, nodes));
                }
                return object;
            }
            case START_ARRAY: {
                ArrayNode array = nodes.arrayNode();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    if (p.currentToken() == null) {
                        throw new com.fasterxml.jackson.core.io.JsonEOFException(p, null,
                                "unexpected end of input in an array");
                    }
                    array.add(read(p, nodes));
                }
                return array;
            }
            case VALUE_STRING:
                return nodes.textNode(p.getText());
            case VALUE_NUMBER_INT:
                switch (p.getNumberType()) {
                    case INT:
                        return nodes.numberNode(p.getIntValue());
                    case LONG:
                        return nodes.numberNode(p.getLongValue());
                    default:
                        return nodes.numberNode(p.getBigIntegerValue());
                }
            case VALUE_NUMBER_FLOAT:
                switch (p.getNumberType()) {
                    case BIG_DECIMAL:
                        return nodes.numberNode(p.getDecimalValue());
                    case FLOAT:
                        return nodes.numberNode(p.getFloatValue());
                    default:
                        return nodes.numberNode(p.getDoubleValue());
                }
            case VALUE_TRUE:
                return nodes.booleanNode(true);
            case VALUE_FALSE:
                return nodes.booleanNode(false);
            case VALUE_NULL:
                return nodes.nullNode();
            case VALUE_EMBEDDED_OBJECT:
                return nodes.pojoNode(p.getEmbeddedObject());
            default:
                throw new com.fasterxml.jackson.core.JsonParseException(p, "unexpected token " + t
                        + " where a JSON value was expected");
        }
    }
}
