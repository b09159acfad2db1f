package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.SystemMessages;
import dev.panoptes.control.ExtraBody;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolCall;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The JSON of OpenAI's {@code POST /chat/completions}: builds request bodies and reads response
 * bodies, tolerating unknown fields, null content and absent usage. Thread-safe (its one
 * state is the client's shared {@link ObjectMapper}): a request body is built on the thread
 * that calls the client, an answer read on the thread that ends the attempt.
 */
final class ChatCompletions {
    private static final java.security.SecureRandom ID_RANDOM = new java.security.SecureRandom();
    private final ObjectMapper mapper;

    ChatCompletions(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /**
     * {@code {"model", "messages": [system?, turns...], "temperature"?, "max_tokens"?, "seed"?,
     * "top_p"?, "stop"?, extra fields..., "stream": false}}; parameters the spec leaves null are
     * left out so the server's defaults apply. An extra field never replaces one Panoptes sets.
     */
    byte[] requestBody(String model, ModelRequest request) {
        // Written field by field rather than built as a tree and then written: the worker's
        // main thread builds one body per model call, and the tree cost twice the time.
        SpecParams p = request.params();
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = mapper.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("model", model);
            g.writeArrayFieldStart("messages");
            // A vignette's own system message is joined to the run's: never two system messages.
            for (ChatMessage m : SystemMessages.join(p.system(), request.turns())) {
                g.writeStartObject();
                g.writeStringField("role", m.role());
                g.writeStringField("content", m.content());
                g.writeEndObject();
            }
            if (request.toolChat() != null) {
                for (JsonNode m : request.toolChat().messages()) {
                    mapper.writeTree(g, m);
                }
                g.writeEndArray();
                g.writeFieldName("tools");
                mapper.writeTree(g, ToolDefinitions.of(mapper, request.toolChat().tools()));
                g.writeStringField("tool_choice", "auto");
            } else {
                g.writeEndArray();
            }
            if (p.temperature() != null) {
                g.writeNumberField("temperature", p.temperature());
            }
            if (p.maxTokens() != null) {
                g.writeNumberField("max_tokens", p.maxTokens());
            }
            if (p.seed() != null) {
                g.writeNumberField("seed", p.seed());
            }
            if (p.topP() != null) {
                g.writeNumberField("top_p", p.topP());
            }
            if (p.stop() != null) {
                g.writeArrayFieldStart("stop");
                for (String stop : p.stop()) {
                    g.writeString(stop);
                }
                g.writeEndArray();
            }
            if (p.extraBody() != null) {
                // The fields Panoptes sets itself were refused when the run was planned; ours are
                // kept should one come from elsewhere (all but the tools' are RESERVED).
                for (java.util.Map.Entry<String, JsonNode> f : ExtraBody.parse(p.extraBody()).properties()) {
                    String name = f.getKey();
                    boolean ours = ExtraBody.RESERVED.contains(name) || request.toolChat() != null
                            && (name.equals("tools") || name.equals("tool_choice"));
                    if (!ours) {
                        g.writeFieldName(f.getKey());
                        mapper.writeTree(g, f.getValue());
                    }
                }
            }
            g.writeBooleanField("stream", false);
            g.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize a chat completion request", e);
        }
        return out.toByteArray();
    }

    /** As {@link #parseResponse(Answer)}, for a body at hand as text. */
    ModelResponse parseResponse(String body) throws BadResponse {
        try {
            return parse(mapper.createParser(body), () -> body);
        } catch (IOException e) {
            throw malformed(e, () -> body);
        }
    }

    /**
     * Reads a 2xx response body.
     *
     * <p>It streams through the body once, from its bytes, and makes trees of only what it
     * reads: the first choice, {@code model} and {@code usage}. Everything else (further
     * choices, {@code id}, {@code system_fingerprint}, ...) is skipped token by token, though
     * still checked to be well-formed, so that a body cut short anywhere is malformed as before.
     * The checks of the shape run once the body has been read to its end, in the order they
     * had when the whole body was one tree, so that each failure keeps its message and scope.
     * Runs on the I/O thread that read the answer: its CPU is the worker's per call.
     *
     * @return the answer, with latency 0 (the caller knows the latency)
     * @throws BadResponse when the body is not JSON ({@link FailureScope#TRANSIENT}: truncated on
     *                     the way), is JSON of the wrong shape ({@link FailureScope#WORKER}: the
     *                     server speaks another API, so this worker's base URL is wrong), or
     *                     carries an error (scoped by the status in its code, else
     *                     {@link FailureScope#JOB}: the server understood and refused the request)
     */
    ModelResponse parseResponse(Answer answer) throws BadResponse {
        try {
            return parse(answer.json(mapper), answer::body);
        } catch (IOException e) {
            throw malformed(e, answer::body);
        }
    }

    private static BadResponse malformed(IOException e, Supplier<String> body) {
        String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
        return new BadResponse(FailureScope.TRANSIENT, "malformed or truncated JSON in the response body ("
                + Texts.excerpt(why, 120) + "); body starts: " + Texts.excerpt(body.get(), 120));
    }

    private ModelResponse parse(JsonParser parser, Supplier<String> body) throws IOException, BadResponse {
        // Null as long as 'choices' is not a non-empty array; a JSON null when its first element is one.
        JsonNode firstChoice = null;
        JsonNode modelNode = null;
        JsonNode usageNode = null;
        boolean choicesArray = false;
        JsonNodeFactory nodes = mapper.getDeserializationConfig().getNodeFactory();
        try (parser) {
            JsonToken rootToken = parser.nextToken();
            if (rootToken == null) {
                throw new BadResponse(FailureScope.TRANSIENT, "empty response body");
            }
            if (rootToken != JsonToken.START_OBJECT) {
                // Read to the end, so that a malformed body is called malformed before it is
                // called the wrong shape, as when it was read whole.
                parser.skipChildren();
                throw new BadResponse(FailureScope.WORKER, "the response body is not a JSON object; body starts: "
                        + Texts.excerpt(body.get(), 120));
            }
            for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                JsonToken value = parser.nextToken();
                switch (name) {
                    case "choices":
                        // A repeated field counts once, the last, as in a tree.
                        choicesArray = value == JsonToken.START_ARRAY;
                        firstChoice = null;
                        if (choicesArray) {
                            firstChoice = firstElement(parser, nodes);
                        } else {
                            parser.skipChildren();
                        }
                        break;
                    case "model":
                        modelNode = JsonTrees.read(parser, nodes);
                        break;
                    case "usage":
                        usageNode = JsonTrees.read(parser, nodes);
                        break;
                    default:
                        parser.skipChildren();
                }
            }
        }
        if (!choicesArray) {
            Optional<ApiError> error = ApiError.parse(mapper, body.get());
            if (error.isPresent()) {
                // llama.cpp puts the HTTP status it meant in the code; without one, the server
                // understood the request well enough to answer with an error about it.
                int status = error.get().codeAsStatus();
                throw new BadResponse(status > 0 ? Retries.scopeOf(status, error.get()) : FailureScope.JOB,
                        "the response carries an error instead of 'choices': " + error.get().describe());
            }
            throw new BadResponse(FailureScope.WORKER, "the response has no 'choices' array; body starts: "
                    + Texts.excerpt(body.get(), 120));
        }
        if (firstChoice == null) {
            // The shape of a chat completion with nothing in it: some gateways answer so when a
            // filter drops the output, which is about this prompt, not about the worker.
            throw new BadResponse(FailureScope.JOB, "the response's 'choices' array is empty");
        }
        JsonNode message = firstChoice.get("message");
        if (message == null || !message.isObject()) {
            throw new BadResponse(FailureScope.WORKER, "the response has no object 'choices[0].message'");
        }
        String text = content(message.get("content"));
        String finishReason = textOrNull(firstChoice.get("finish_reason"));
        String model = textOrNull(modelNode);
        List<ToolCall> calls = toolCalls((ObjectNode) message);
        return new ModelResponse(text, finishReason, model, usage(usageNode), 0, calls,
                calls.isEmpty() ? null : message);
    }

    /**
     * With the parser at an array's start: its first element as a tree (null when the array is
     * empty, {@link NullNode} when the element is a JSON null), the others skipped; leaves the
     * parser at the array's end.
     */
    private static JsonNode firstElement(JsonParser parser, JsonNodeFactory nodes) throws IOException {
        JsonNode first = null;
        if (parser.nextToken() != JsonToken.END_ARRAY) {
            first = JsonTrees.read(parser, nodes);
            while (parser.nextToken() != JsonToken.END_ARRAY) {
                parser.skipChildren();
            }
        }
        return first;
    }

    /**
     * The message's {@code tool_calls}, read as servers send them: an id missing (Ollama) is made
     * up and written into the message, so that the tool messages answering it match; arguments
     * sent as an object (llama.cpp) are taken as their JSON text.
     */
    private List<ToolCall> toolCalls(ObjectNode message) throws BadResponse {
        JsonNode calls = message.get("tool_calls");
        if (calls == null || calls.isNull()) {
            return List.of();
        }
        if (!calls.isArray()) {
            throw new BadResponse(FailureScope.WORKER, "'choices[0].message.tool_calls' is not an array");
        }
        List<ToolCall> out = new ArrayList<>();
        for (JsonNode call : calls) {
            JsonNode function = call.get("function");
            if (!call.isObject() || function == null || !function.isObject() || !function.path("name").isTextual()) {
                throw new BadResponse(FailureScope.WORKER, "a tool call of 'choices[0].message.tool_calls' has no"
                        + " 'function' with a 'name': " + Texts.excerpt(call.toString(), 120));
            }
            String id = call.path("id").isTextual() && !call.path("id").asText().isEmpty() ? call.get("id").asText()
                    : null;
            if (id == null) {
                id = "call_" + out.size() + "_" + Long.toHexString(ID_RANDOM.nextLong());
                ((ObjectNode) call).put("id", id);
                if (!call.has("type")) {
                    ((ObjectNode) call).put("type", "function");
                }
            }
            JsonNode arguments = function.get("arguments");
            String text = arguments == null || arguments.isNull() ? "{}"
                    : arguments.isTextual() ? arguments.asText() : arguments.toString();
            out.add(new ToolCall(id, function.get("name").asText(), text));
        }
        return out;
    }

    private static String content(JsonNode content) throws BadResponse {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.asText();
        }
        if (content.isArray()) {
            // Some gateways answer with content parts: [{"type":"text","text":"..."}].
            StringBuilder s = new StringBuilder();
            for (JsonNode part : content) {
                JsonNode text = part.get("text");
                if (text != null && text.isTextual()) {
                    s.append(text.asText());
                }
            }
            return s.toString();
        }
        throw new BadResponse(FailureScope.WORKER, "'choices[0].message.content' is neither text nor null but "
                + content.getNodeType().toString().toLowerCase(java.util.Locale.ROOT));
    }

    /** Usage when both counts are non-negative whole numbers (a missing one counts 0), else null. */
    private static Usage usage(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return null;
        }
        JsonNode prompt = usage.get("prompt_tokens");
        JsonNode completion = usage.get("completion_tokens");
        if (prompt == null && completion == null) {
            return null;
        }
        long p = count(prompt);
        long c = count(completion);
        return p < 0 || c < 0 ? null : new Usage(p, c);
    }

    private static long count(JsonNode n) {
        if (n == null || n.isNull()) {
            return 0;
        }
        return n.canConvertToLong() && n.isIntegralNumber() ? n.asLong() : -1;
    }

    private static String textOrNull(JsonNode node) {
        return node == null || node.isNull() || !node.isValueNode() ? null : node.asText();
    }

    /** A 2xx response whose body is not a chat completion, and whose fault that is. */
    static final class BadResponse extends Exception {
        private static final long serialVersionUID = 1L;
        private final FailureScope scope;

        BadResponse(FailureScope scope, String message) {
            super(message, null, false, false);
            this.scope = scope;
        }

        FailureScope scope() {
            return scope;
        }
    }
}
