package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Usage;
import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.ModelResponse;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The JSON of OpenAI's legacy {@code POST /completions} as vLLM serves it, for log-likelihoods:
 * every choice's prompt ({@code context + continuation}) in one request, with {@code echo},
 * {@code logprobs: 1}, {@code max_tokens: 1} and {@code temperature: 0}, as lm-evaluation-harness's
 * {@code local-completions} model asks.
 *
 * <p><b>The context/continuation boundary</b> is found from the answer's {@code text_offset}s,
 * not from a {@code /tokenize} call: they come with the log-probabilities, cost no second request,
 * and every server that echoes prompt log-probabilities in this API gives them. A prompt token
 * belongs to the continuation when any of its characters do, that is when it ends after the
 * context. So a token that spans the boundary (a context ending in a space followed by
 * {@code "Paris"} is one token {@code " Paris"} to most tokenizers) counts in the continuation:
 * it holds the continuation's first characters, and leaving it out would drop the choice's first
 * word from its score. lm-eval reaches the same split for such a space by moving a context's
 * trailing whitespace into the continuation before tokenizing them apart. Offsets count code
 * points, as Python's string indices (and so vLLM's) do. The generated token (the one
 * {@code max_tokens} asks for) starts at the prompt's end and is left out.
 *
 * <p>Thread-safe: its one state is the client's shared {@link ObjectMapper}.
 */
final class TextCompletions {
    /** The prompt of the capability check: plain words, so that any tokenizer makes several tokens of it. */
    static final String PROBE_PROMPT = "Panoptes checks that this server returns prompt log-probabilities";

    private final ObjectMapper mapper;

    TextCompletions(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** The body asking for every choice's prompt with its prompt log-probabilities. */
    byte[] requestBody(String model, LoglikelihoodRequest request) {
        ObjectNode body = mapper.createObjectNode();
        body.put("model", model);
        ArrayNode prompts = body.putArray("prompt");
        for (int i = 0; i < request.choices().size(); i++) {
            prompts.add(request.prompt(i));
        }
        return write(withEcho(body));
    }

    /** The body of the capability check: one prompt, asked as a log-likelihood request is. */
    byte[] probeBody(String model) {
        ObjectNode body = mapper.createObjectNode();
        body.put("model", model);
        body.put("prompt", PROBE_PROMPT);
        return write(withEcho(body));
    }

    private static ObjectNode withEcho(ObjectNode body) {
        return body.put("echo", true).put("logprobs", 1).put("max_tokens", 1).put("temperature", 0);
    }

    private byte[] write(ObjectNode body) {
        try {
            return mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a completion request", e);
        }
    }

    /**
     * Reads the answer to the capability check: its text is empty when the server returned one
     * log-probability per prompt token (the first null), else the server's shortfall in words.
     *
     * @throws ChatCompletions.BadResponse when the body is not a text completion at all
     */
    ModelResponse probeVerdict(Answer body) throws ChatCompletions.BadResponse {
        JsonNode choice = root(body).get("choices").get(0);
        String shortfall = shortfall(choice.get("logprobs"), PROBE_PROMPT);
        return new ModelResponse(shortfall == null ? "" : shortfall, null, null, null, 0);
    }

    /**
     * What is missing from a choice's {@code logprobs} for prompt log-probabilities, or null
     * when nothing is.
     */
    private static String shortfall(JsonNode logprobs, String prompt) {
        if (logprobs == null || logprobs.isNull() || !logprobs.isObject()) {
            return "it returned no log-probabilities at all";
        }
        JsonNode values = logprobs.get("token_logprobs");
        JsonNode offsets = logprobs.get("text_offset");
        if (values == null || !values.isArray() || offsets == null || !offsets.isArray()) {
            int n = logprobs.path("content").size();
            return "it returned log-probabilities for " + n + (n == 1 ? " token" : " tokens")
                    + " in the chat shape (logprobs.content), those of the generated text only, not of the prompt";
        }
        int promptLength = prompt.codePointCount(0, prompt.length());
        int promptTokens = 0;
        for (JsonNode o : offsets) {
            if (o.asInt() < promptLength) {
                promptTokens++;
            }
        }
        if (promptTokens < 2 || offsets.get(0).asInt() != 0) {
            return "it returned log-probabilities for " + values.size() + (values.size() == 1 ? " token" : " tokens")
                    + " with " + (promptTokens == 0 ? "none" : promptTokens + "") + " of them in the prompt:"
                    + " the generated text's only, not the prompt's (echo ignored)";
        }
        if (!values.get(0).isNull()) {
            return "its first prompt token has a log-probability, where it can have none (nothing precedes it)";
        }
        for (int i = 1; i < promptTokens; i++) {
            if (!values.get(i).isNumber()) {
                return "prompt token " + i + " has no log-probability";
            }
        }
        return null;
    }

    /**
     * Reads the answer to a log-likelihood request: per choice, the sum of its continuation's
     * token log-probabilities and whether each was the top one.
     *
     * @return the answer, its text {@link ChoiceLoglikelihoods}' JSON, with latency 0
     * @throws ChatCompletions.BadResponse when the body is not a text completion
     *                                     ({@link FailureScope#WORKER}, or TRANSIENT when cut
     *                                     short), lacks prompt log-probabilities (WORKER), or the
     *                                     continuation has a token without one (JOB: an empty
     *                                     context)
     */
    ModelResponse parseLoglikelihoods(Answer body, LoglikelihoodRequest request) throws ChatCompletions.BadResponse {
        JsonNode root = root(body);
        int n = request.choices().size();
        JsonNode[] byIndex = new JsonNode[n];
        int position = 0;
        for (JsonNode choice : root.get("choices")) {
            int index = choice.has("index") ? choice.get("index").asInt() : position;
            if (index >= 0 && index < n) {
                byIndex[index] = choice;
            }
            position++;
        }
        List<Double> lls = new ArrayList<>(n);
        List<Boolean> greedy = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            if (byIndex[i] == null) {
                throw new ChatCompletions.BadResponse(FailureScope.WORKER, "the answer has no choice " + i + " of the "
                        + n + " prompts sent (one per choice): the server does not take a list of prompts");
            }
            String prompt = request.prompt(i);
            JsonNode logprobs = byIndex[i].get("logprobs");
            String shortfall = shortfall(logprobs, prompt);
            if (shortfall != null) {
                throw new ChatCompletions.BadResponse(FailureScope.WORKER, "asked with echo and logprobs, " + shortfall
                        + "; log-likelihood jobs need one log-probability per prompt token, as vLLM returns them");
            }
            scoreContinuation(logprobs, request.context(), prompt, i, lls, greedy);
        }
        String model = root.hasNonNull("model") ? root.get("model").asText() : null;
        ChoiceLoglikelihoods result = ChoiceLoglikelihoods.of(request.choices(), lls, greedy);
        return new ModelResponse(result.toJson(), null, model, usage(root.get("usage")), 0);
    }

    /** Adds one choice's log-likelihood and greedy flag. */
    private static void scoreContinuation(JsonNode logprobs, String context, String prompt, int choice,
                                          List<Double> lls, List<Boolean> greedy) throws ChatCompletions.BadResponse {
        JsonNode values = logprobs.get("token_logprobs");
        JsonNode offsets = logprobs.get("text_offset");
        JsonNode tops = logprobs.get("top_logprobs");
        int contextLength = context.codePointCount(0, context.length());
        int promptLength = prompt.codePointCount(0, prompt.length());
        double sum = 0;
        boolean allTop = true;
        int counted = 0;
        for (int j = 0; j < offsets.size(); j++) {
            int start = offsets.get(j).asInt();
            if (start >= promptLength) {
                break;
            }
            int end = j + 1 < offsets.size() ? Math.min(offsets.get(j + 1).asInt(), promptLength) : promptLength;
            if (end <= contextLength) {
                continue;
            }
            JsonNode value = values.get(j);
            if (value == null || !value.isNumber()) {
                throw new ChatCompletions.BadResponse(FailureScope.JOB, "choice " + choice + "'s continuation starts"
                        + " at the prompt's first token, which has no log-probability: the vignette's prompt is empty");
            }
            double lp = value.asDouble();
            sum += lp;
            counted++;
            JsonNode top = tops == null ? null : tops.get(j);
            if (top == null || !top.isObject() || top.isEmpty()) {
                allTop = false;
            } else {
                for (Iterator<JsonNode> it = top.elements(); it.hasNext(); ) {
                    if (it.next().asDouble() > lp) {
                        allTop = false;
                    }
                }
            }
        }
        if (counted == 0) {
            throw new ChatCompletions.BadResponse(FailureScope.JOB, "choice " + choice + "'s continuation has no token"
                    + " in the answer's text_offset");
        }
        lls.add(sum);
        greedy.add(allTop);
    }

    /**
     * The body as an object with a non-empty {@code choices} array, or whose fault it is not.
     * Read from the body's bytes, with no copy to text first: only a message about it needs that.
     */
    private JsonNode root(Answer body) throws ChatCompletions.BadResponse {
        JsonNode root;
        try (JsonParser parser = body.json(mapper)) {
            root = mapper.readTree(parser);
        } catch (IOException e) {
            throw new ChatCompletions.BadResponse(FailureScope.TRANSIENT, "malformed or truncated JSON in the response"
                    + " body; body starts: " + Texts.excerpt(body.body(), 120));
        }
        if (root == null || !root.isObject()) {
            throw new ChatCompletions.BadResponse(FailureScope.WORKER, "the response body is not a JSON object");
        }
        JsonNode choices = root.get("choices");
        if (choices == null || !choices.isArray() || choices.isEmpty()) {
            throw new ChatCompletions.BadResponse(FailureScope.WORKER, "the response has no 'choices' of a text"
                    + " completion; body starts: " + Texts.excerpt(body.body(), 120));
        }
        return root;
    }

    private static Usage usage(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return null;
        }
        long p = usage.path("prompt_tokens").asLong(-1);
        long c = usage.path("completion_tokens").asLong(0);
        return p < 0 || c < 0 ? null : new Usage(p, c);
    }
}
