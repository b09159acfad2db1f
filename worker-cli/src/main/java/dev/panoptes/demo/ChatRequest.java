package dev.panoptes.demo;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link StubModelServer} reads from a chat-completions request: the model, the seed, the
 * last message's content (the prompt it answers) and the words in all messages (its context).
 *
 * <p>Read in one streaming pass instead of as a tree, since the stub reads every call's body and
 * needs four values of it. It reads exactly what the tree it replaced read: a value that is not a
 * string (a number, {@code null}, the content parts of a multimodal message) is read as a tree
 * node and converted as the tree did ({@link JsonNode#asText(String)}, {@link JsonNode#asLong()}).
 * Of fields given twice, the last counts, as in a tree; anything after the body's object is
 * ignored, as {@code readTree} ignores it.
 *
 * @param model        the {@code model} field, {@code "stub"} when there is none
 * @param seed         the {@code seed} field, null when there is none (or it is null)
 * @param prompt       the last message's {@code content}, {@code ""} when it has none
 * @param promptTokens the words in all messages' contents (see {@link WordCount})
 * @param stop         the {@code stop} sequences (a string or an array of strings), empty when none
 */
record ChatRequest(String model, Long seed, String prompt, int promptTokens, List<String> stop) {
    /** A request without stop sequences. */
    ChatRequest(String model, Long seed, String prompt, int promptTokens) {
        this(model, seed, prompt, promptTokens, List.of());
    }

    /**
     * Reads one request body from {@code json}, whose codec must be an {@code ObjectMapper} (a parser
     * from {@code ObjectMapper.createParser}).
     *
     * @return the request, or null when the body holds no non-empty {@code messages} array (or is
     *         not an object, or is empty)
     * @throws IOException when the body is not JSON, or cannot be read
     */
    static ChatRequest read(JsonParser json) throws IOException {
        JsonToken root = json.nextToken();
        if (root != JsonToken.START_OBJECT) {
            json.skipChildren();
            return null;
        }
        String model = "stub";
        Long seed = null;
        Messages messages = null;
        List<String> stop = List.of();
        while (json.nextToken() == JsonToken.FIELD_NAME) {
            String field = json.currentName();
            JsonToken value = json.nextToken();
            switch (field) {
                case "model" -> model = text(json, value, "stub");
                case "seed" -> seed = value == JsonToken.VALUE_NULL ? null : tree(json).asLong();
                case "messages" -> messages = value == JsonToken.START_ARRAY ? Messages.read(json) : skip(json);
                case "stop" -> stop = stops(tree(json));
                default -> json.skipChildren();
            }
        }
        return messages == null || messages.count == 0
                ? null : new ChatRequest(model, seed, messages.last, messages.words, stop);
    }

    /** OpenAI's {@code stop}: one string, or an array of them; anything else is none. */
    private static List<String> stops(JsonNode node) {
        List<String> stops = new ArrayList<>();
        if (node.isTextual()) {
            stops.add(node.asText());
        } else if (node.isArray()) {
            node.forEach(s -> {
                if (s.isTextual() && !s.asText().isEmpty()) {
                    stops.add(s.asText());
                }
            });
        }
        return stops;
    }

    /** The messages array: how many, the last one's content, and the words in all of them. */
    private static final class Messages {
        int count;
        String last = "";
        int words;

        /** Reads from the array's start to its end. */
        static Messages read(JsonParser json) throws IOException {
            Messages messages = new Messages();
            while (json.nextToken() != JsonToken.END_ARRAY) {
                String content = json.currentToken() == JsonToken.START_OBJECT ? content(json) : skipped(json);
                messages.count++;
                messages.last = content;
                messages.words += WordCount.of(content);
            }
            return messages;
        }

        /** A message object's {@code content}, read to the object's end; "" when it has none. */
        private static String content(JsonParser json) throws IOException {
            String content = "";
            while (json.nextToken() == JsonToken.FIELD_NAME) {
                String field = json.currentName();
                JsonToken value = json.nextToken();
                if (field.equals("content")) {
                    content = text(json, value, "");
                } else {
                    json.skipChildren();
                }
            }
            return content;
        }

        /** A message that is not an object has no content. */
        private static String skipped(JsonParser json) throws IOException {
            json.skipChildren();
            return "";
        }
    }

    /** The current value as text, as {@code JsonNode.asText(otherwise)} reads it. */
    private static String text(JsonParser json, JsonToken value, String otherwise) throws IOException {
        return switch (value) {
            case VALUE_STRING -> json.getText();
            case VALUE_NULL -> otherwise;
            default -> tree(json).asText(otherwise);
        };
    }

    private static JsonNode tree(JsonParser json) throws IOException {
        return json.readValueAsTree();
    }

    private static Messages skip(JsonParser json) throws IOException {
        json.skipChildren();
        return null;
    }
}
