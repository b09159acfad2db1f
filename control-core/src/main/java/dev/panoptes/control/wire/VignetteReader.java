package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Choices;
import dev.panoptes.control.SandboxTask;
import dev.panoptes.control.Vignette;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.panoptes.control.wire.FieldReader.require;
import static dev.panoptes.control.wire.FieldReader.skip;
import static dev.panoptes.control.wire.FieldReader.text;

/**
 * Reads a Vignette object, as a suite's line or an {@code assign} frame holds it: Panoptes' own
 * fields ({@code id}, {@code prompt} or {@code messages}, {@code expected}, {@code metadata},
 * {@code scorer}, and for a multiple-choice vignette {@code choices} with its
 * {@code choiceDelimiter}; its {@code expected} is then the right choice's index from 0), and the fields of an Inspect sample, so that a dataset written for
 * Inspect reads as it is: {@code input} (a string, or a chat), {@code target} (a string, a
 * one-element list, or for a multiple-choice sample the right choice as a letter, an index or
 * its text) and an integer {@code id}. A message's {@code content} may be a string or OpenAI's
 * array of parts, of which text parts are read (joined) and any other kind is refused.
 *
 * <p>A {@code sandbox} object is Panoptes' {@link dev.panoptes.control.SandboxTask} (tools,
 * limits, files, setup, a check); Inspect's own {@code sandbox} (a string such as
 * {@code "docker"}, or a list) is not read, and named as not used.
 *
 * <p>Every other field is skipped, and its name handed to the caller's collector, so that a
 * suite can say once which fields of its lines went unused (a typo, or an Inspect field such as
 * {@code files} that Panoptes does not act on).
 *
 * <p>Stateless apart from Jackson's immutable reader; thread-safe.
 */
final class VignetteReader {
    private final ObjectReader metadataReader;

    VignetteReader(ObjectReader metadataReader) {
        this.metadataReader = metadataReader;
    }

    /**
     * Reads one vignette, the parser on its object's start; leaves it on the object's end.
     *
     * @param unused gets the name of every field not read; null when nobody asks
     * @throws FieldReader.Fault naming a field of the wrong type, a missing one, or two that
     *                           contradict each other
     */
    Vignette read(JsonParser p, Set<String> unused) throws IOException {
        String id = null;
        String prompt = null;
        String expected = null;
        Object target = null;
        Map<String, Object> metadata = null;
        List<ChatMessage> messages = null;
        List<ChatMessage> input = null;
        String inputText = null;
        String scorer = null;
        List<String> choices = null;
        String delimiter = null;
        SandboxTask sandbox = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            switch (field) {
                case "id" -> id = idText(p);
                case "prompt" -> prompt = text(p);
                case "expected" -> expected = text(p);
                case "metadata" -> metadata = FieldReader.object(p) ? metadataReader.readValue(p) : null;
                case "messages" -> messages = FieldReader.array(p, "an array") ? messages(p) : null;
                case "scorer" -> scorer = text(p);
                case "choices" -> choices = FieldReader.array(p, "an array of strings") ? strings(p) : null;
                case "choiceDelimiter" -> delimiter = text(p);
                case "target" -> target = target(p);
                case "sandbox" -> {
                    if (p.nextToken() == JsonToken.START_OBJECT) {
                        sandbox = sandbox(p);
                    } else {
                        // Inspect's own "sandbox" ("docker", or [type, config]) is not Panoptes':
                        // named as not used, as Inspect's other fields are.
                        p.skipChildren();
                        if (unused != null && p.currentToken() != JsonToken.VALUE_NULL) {
                            unused.add(field);
                        }
                    }
                }
                case "input" -> {
                    JsonToken t = p.nextToken();
                    if (t == JsonToken.VALUE_STRING) {
                        inputText = p.getText();
                    } else if (t == JsonToken.START_ARRAY) {
                        input = messages(p);
                    } else if (t != JsonToken.VALUE_NULL) {
                        throw new FieldReader.Fault(FieldReader.path(p.getParsingContext())
                                + " must be a string or an array of messages, got "
                                + FieldReader.describe(t));
                    }
                }
                default -> {
                    if (unused != null) {
                        unused.add(field);
                    }
                    skip(p);
                }
            }
        }
        if (inputText != null || input != null) {
            if (prompt != null || messages != null) {
                throw new FieldReader.Fault(FieldReader.path(p.getParsingContext()) + " has \"input\" and \""
                        + (prompt != null ? "prompt" : "messages")
                        + "\"; give one (input is Inspect's name for the prompt or chat)");
            }
            prompt = inputText;
            messages = input;
        }
        if (choices != null && messages != null && !messages.isEmpty()) {
            // Inspect writes a question as a chat of one user message as often as a string.
            if (messages.size() == 1 && "user".equals(messages.get(0).role())) {
                prompt = messages.get(0).content();
                messages = null;
            }
        }
        if (target != null) {
            if (expected != null) {
                throw new FieldReader.Fault(FieldReader.path(p.getParsingContext())
                        + " has \"target\" and \"expected\"; give one (target is Inspect's name"
                        + " for the expected answer)");
            }
            try {
                expected = choices == null ? plainTarget(target) : choiceTarget(target, choices);
            } catch (FieldReader.Fault e) {
                throw new FieldReader.Fault(FieldReader.path(p.getParsingContext()) + e.getMessage());
            }
        }
        if (messages == null || messages.isEmpty()) {
            if (prompt == null) {
                require(p, null, "prompt");
            }
            messages = List.of();
        }
        Choices asked = choices == null ? null : new Choices(choices, delimiter);
        return new Vignette(require(p, id, "id"), prompt, expected, metadata, messages, scorer, asked, sandbox);
    }

    /** A {@code sandbox} object, the parser on its start; its problems named with the field's path. */
    private SandboxTask sandbox(JsonParser p) throws IOException {
        String where = FieldReader.path(p.getParsingContext());
        Map<String, Object> json = metadataReader.readValue(p);
        try {
            return SandboxTask.fromJson(json);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new FieldReader.Fault(where + ": " + e.getMessage());
        }
    }

    /** An id: a string, or an integer (Inspect's samples number theirs) read as its decimal text. */
    private static String idText(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        return switch (t) {
            case VALUE_STRING, VALUE_NUMBER_INT -> p.getText();
            case VALUE_NULL -> null;
            default -> throw new FieldReader.Fault(FieldReader.path(p.getParsingContext())
                    + " must be a string or an integer, got "
                    + FieldReader.describe(t));
        };
    }

    /** A target: a string, an integer, or a list of strings, as Inspect writes it. */
    private static Object target(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        return switch (t) {
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getIntValue();
            case START_ARRAY -> strings(p);
            case VALUE_NULL -> null;
            default -> throw new FieldReader.Fault(FieldReader.path(p.getParsingContext())
                    + " must be a string, an integer or a list of strings, got "
                    + FieldReader.describe(t));
        };
    }

    /** The expected answer a target gives a vignette that is not multiple choice. */
    private static String plainTarget(Object target) {
        if (target instanceof List<?> list) {
            if (list.size() != 1) {
                throw new FieldReader.Fault(".target lists " + list.size() + " answers; Panoptes scores against one"
                        + " expected answer: give one (or a regex scorer that accepts each)");
            }
            return (String) list.get(0);
        }
        return target.toString();
    }

    /**
     * The right choice's index, as a decimal: the target as an index from 0, a letter (A for the
     * first choice, as Inspect writes it), or the choice's own text.
     */
    private static String choiceTarget(Object target, List<String> choices) {
        if (target instanceof List<?> list) {
            if (list.size() != 1) {
                throw new FieldReader.Fault(".target lists " + list.size() + " answers; a multiple-choice vignette"
                        + " has one right choice");
            }
            target = list.get(0);
        }
        if (target instanceof Integer i) {
            if (i < 0 || i >= choices.size()) {
                throw new FieldReader.Fault(".target " + i + " is not the index of one of the " + choices.size()
                        + " choices (0 to " + (choices.size() - 1) + ")");
            }
            return Integer.toString(i);
        }
        String s = (String) target;
        int index = choices.indexOf(s);
        if (index >= 0) {
            return Integer.toString(index);
        }
        if (s.length() == 1 && s.charAt(0) >= 'A' && s.charAt(0) < 'A' + choices.size()) {
            return Integer.toString(s.charAt(0) - 'A');
        }
        if (Vignette.choiceIndex(s, choices.size()) >= 0) {
            return s;
        }
        throw new FieldReader.Fault(".target '" + s + "' names none of the " + choices.size() + " choices: give"
                + " a letter (A to " + (char) ('A' + choices.size() - 1) + "), an index from 0, or a choice's text");
    }

    private static List<String> strings(JsonParser p) throws IOException {
        List<String> strings = new ArrayList<>();
        for (String s = FieldReader.nextText(p); s != null; s = FieldReader.nextText(p)) {
            strings.add(s);
        }
        return strings;
    }

    private static List<ChatMessage> messages(JsonParser p) throws IOException {
        List<ChatMessage> messages = new ArrayList<>();
        while (FieldReader.nextObject(p)) {
            String role = null;
            String content = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                switch (p.currentName()) {
                    case "role" -> role = text(p);
                    case "content" -> content = content(p);
                    default -> skip(p);
                }
            }
            messages.add(new ChatMessage(require(p, role, "role"), require(p, content, "content")));
        }
        return messages;
    }

    /** A message's content: a string, or an array of parts whose text parts are joined. */
    private static String content(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            throw new FieldReader.Fault(FieldReader.path(p.getParsingContext()) + " must be a string, got "
                    + FieldReader.describe(t) + " (or an array of text parts)");
        }
        StringBuilder text = new StringBuilder();
        while (FieldReader.nextObject(p)) {
            String type = null;
            String partText = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                switch (p.currentName()) {
                    case "type" -> type = text(p);
                    case "text" -> partText = text(p);
                    default -> skip(p);
                }
            }
            if (type != null && !"text".equals(type)) {
                throw new FieldReader.Fault(FieldReader.path(p.getParsingContext()) + " is a content part of type '"
                        + type + "'; only text parts can be sent: give the text, or leave the part out");
            }
            text.append(require(p, partText, "text"));
        }
        return text.toString();
    }
}
