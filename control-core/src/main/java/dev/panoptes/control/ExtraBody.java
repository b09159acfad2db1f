package dev.panoptes.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Extra fields of a chat completion's request body ({@link SpecParams#extraBody()}): options a
 * server understands that Panoptes does not name, such as vLLM's {@code min_p},
 * {@code repetition_penalty} or {@code chat_template_kwargs}. They are kept as the text of one JSON
 * object with its keys sorted at every depth, so that the same fields always give the same text,
 * and so the same run id and request key, whatever order they were given in.
 *
 * <p>Stateless; any thread.
 */
public final class ExtraBody {
    /**
     * Fields Panoptes sets itself, from its own options or the run's shape: an extra field may not
     * name one (it would change what a request means behind the options that name it).
     */
    public static final Set<String> RESERVED = Set.of("model", "messages", "stream", "temperature", "max_tokens",
            "max_completion_tokens", "seed", "top_p", "stop", "n");
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            // "0.05x" is text, not 0.05 followed by something ignored.
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private ExtraBody() {
    }

    /**
     * The canonical text of fields given as {@code NAME=VALUE}, VALUE being JSON when it reads as
     * JSON ({@code 0.05}, {@code true}, {@code {"enable_thinking":false}}) and a string otherwise.
     *
     * @param fields the fields as given, in any order
     * @return the canonical JSON object's text, or null when there are none
     * @throws IllegalArgumentException when a field has no '=', an empty name, a reserved name
     *                                  (which option to use instead is named), or comes twice
     */
    public static String of(List<String> fields) {
        if (fields == null || fields.isEmpty()) {
            return null;
        }
        Map<String, Object> body = new LinkedHashMap<>();
        for (String field : fields) {
            int eq = field.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + field + "' is not NAME=VALUE (for example min_p=0.05)");
            }
            String name = field.substring(0, eq).strip();
            if (RESERVED.contains(name)) {
                throw new IllegalArgumentException("'" + name + "' is a field Panoptes sets itself; " + instead(name));
            }
            if (body.containsKey(name)) {
                throw new IllegalArgumentException("'" + name + "' is given twice");
            }
            body.put(name, value(field.substring(eq + 1)));
        }
        return canonical(body);
    }

    /**
     * The fields of a canonical text, to put in a request body: an empty object for null.
     *
     * @throws IllegalArgumentException when the text is not a JSON object
     */
    public static ObjectNode parse(String canonical) {
        if (canonical == null) {
            return JSON.createObjectNode();
        }
        try {
            JsonNode node = JSON.readTree(canonical);
            if (!(node instanceof ObjectNode object)) {
                throw new IllegalArgumentException("extra request fields must be a JSON object, got " + canonical);
            }
            return object;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("extra request fields are not JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static Object value(String text) {
        try {
            return JSON.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            return text;
        }
    }

    private static String canonical(Map<String, Object> body) {
        try {
            return JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("values read from JSON always write as JSON", e);
        }
    }

    private static String instead(String name) {
        return switch (name) {
            case "temperature" -> "use --temperature";
            case "max_tokens", "max_completion_tokens" -> "use --max-tokens";
            case "seed" -> "use --seed";
            case "top_p" -> "use --top-p";
            case "stop" -> "use --stop";
            case "model" -> "use --model";
            case "n" -> "repeats are --epochs, each its own request";
            default -> "it comes from the suite and the run";
        };
    }
}
