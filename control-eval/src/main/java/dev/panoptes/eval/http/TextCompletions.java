package dev.panoptes.eval.http;

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
        TextCompletionAnswer.Choice choice = root(body).choices.get(0);
        String shortfall = shortfall(choice.logprobs, PROBE_PROMPT);
        return new ModelResponse(shortfall == null ? "" : shortfall, null, null, null, 0);
    }

    /**
     * What is missing from a choice's {@code logprobs} for prompt log-probabilities, or null
     * when nothing is.
     */
    private static String shortfall(TextCompletionAnswer.Logprobs logprobs, String prompt) {
        if (logprobs == null) {
            return "it returned no log-probabilities at all";
        }
        TextCompletionAnswer.Values values = logprobs.values;
        int[] offsets = logprobs.offsets;
        if (values == null || offsets == null) {
            int n = logprobs.contentSize;
            return "it returned log-probabilities for " + n + (n == 1 ? " token" : " tokens")
                    + " in the chat shape (logprobs.content), those of the generated text only, not of the prompt";
        }
        int promptLength = prompt.codePointCount(0, prompt.length());
        int promptTokens = 0;
        for (int o : offsets) {
            if (o < promptLength) {
                promptTokens++;
            }
        }
        if (promptTokens < 2 || offsets[0] != 0) {
            return "it returned log-probabilities for " + values.size + (values.size == 1 ? " token" : " tokens")
                    + " with " + (promptTokens == 0 ? "none" : promptTokens + "") + " of them in the prompt:"
                    + " the generated text's only, not the prompt's (echo ignored)";
        }
        if (values.size == 0 || !values.isNull[0]) {
            return "its first prompt token has a log-probability, where it can have none (nothing precedes it)";
        }
        for (int i = 1; i < promptTokens; i++) {
            if (i >= values.size || !values.number[i]) {
                return "prompt token " + i + " has no log-probability";
            }
        }
        return null;
    }

    /**
     * Reads the answer to a log-likelihood request: per choice, the sum of its continuation's
     * token log-probabilities and whether each was the top one.
     *
     * <p>The answer is read in one streaming pass ({@link TextCompletionAnswer}), keeping of each
     * choice only the arrays scored here. Runs on the I/O thread that read the answer.
     *
     * @return the answer, its text {@link ChoiceLoglikelihoods}' JSON, with latency 0
     * @throws ChatCompletions.BadResponse when the body is not a text completion
     *                                     ({@link FailureScope#WORKER}, or TRANSIENT when cut
     *                                     short), lacks prompt log-probabilities (WORKER), or the
     *                                     continuation has a token without one (JOB: an empty
     *                                     context)
     */
    ModelResponse parseLoglikelihoods(Answer body, LoglikelihoodRequest request) throws ChatCompletions.BadResponse {
        TextCompletionAnswer root = root(body);
        int n = request.choices().size();
        TextCompletionAnswer.Choice[] byIndex = new TextCompletionAnswer.Choice[n];
        int position = 0;
        for (TextCompletionAnswer.Choice choice : root.choices) {
            int index = choice.index != null ? choice.index : position;
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
            TextCompletionAnswer.Logprobs logprobs = byIndex[i].logprobs;
            String shortfall = shortfall(logprobs, prompt);
            if (shortfall != null) {
                throw new ChatCompletions.BadResponse(FailureScope.WORKER, "asked with echo and logprobs, " + shortfall
                        + "; log-likelihood jobs need one log-probability per prompt token, as vLLM returns them");
            }
            scoreContinuation(logprobs, request.context(), prompt, i, lls, greedy);
        }
        String model = root.model != null && !root.model.isNull() ? root.model.asText() : null;
        ChoiceLoglikelihoods result = ChoiceLoglikelihoods.of(request.choices(), lls, greedy);
        return new ModelResponse(result.toJson(), null, model, usage(root.usage), 0);
    }

    /** Adds one choice's log-likelihood and greedy flag. */
    private static void scoreContinuation(TextCompletionAnswer.Logprobs logprobs, String context, String prompt,
                                          int choice, List<Double> lls, List<Boolean> greedy)
            throws ChatCompletions.BadResponse {
        TextCompletionAnswer.Values values = logprobs.values;
        int[] offsets = logprobs.offsets;
        TextCompletionAnswer.Tops tops = logprobs.tops;
        int contextLength = context.codePointCount(0, context.length());
        int promptLength = prompt.codePointCount(0, prompt.length());
        double sum = 0;
        boolean allTop = true;
        int counted = 0;
        for (int j = 0; j < offsets.length; j++) {
            int start = offsets[j];
            if (start >= promptLength) {
                break;
            }
            int end = j + 1 < offsets.length ? Math.min(offsets[j + 1], promptLength) : promptLength;
            if (end <= contextLength) {
                continue;
            }
            if (j >= values.size || !values.number[j]) {
                throw new ChatCompletions.BadResponse(FailureScope.JOB, "choice " + choice + "'s continuation starts"
                        + " at the prompt's first token, which has no log-probability: the vignette's prompt is empty");
            }
            double lp = values.value[j];
            sum += lp;
            counted++;
            // A top that is missing, not an object or empty means the token was not known to be the top one.
            if (tops == null || j >= tops.size || !tops.present[j] || tops.max[j] > lp) {
                allTop = false;
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
    private TextCompletionAnswer root(Answer body) throws ChatCompletions.BadResponse {
        TextCompletionAnswer root;
        try {
            root = TextCompletionAnswer.read(body.json(mapper));
        } catch (IOException e) {
            throw new ChatCompletions.BadResponse(FailureScope.TRANSIENT, "malformed or truncated JSON in the response"
                    + " body; body starts: " + Texts.excerpt(body.body(), 120));
        }
        if (!root.isObject) {
            throw new ChatCompletions.BadResponse(FailureScope.WORKER, "the response body is not a JSON object");
        }
        if (root.choices == null || root.choices.isEmpty()) {
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
