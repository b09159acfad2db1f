package dev.panoptes.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One answer of {@link StubModelServer} to {@code POST /v1/completions}, OpenAI's legacy text
 * completions as vLLM serves them: a prompt or a list of prompts (one choice each, in order),
 * {@code max_tokens} (at most one token is generated), and with {@code echo} and
 * {@code logprobs} the prompt's tokens, each with its log-probability (the first null, as no
 * token precedes it), its {@code top_logprobs} and its {@code text_offset} in code points.
 *
 * <p><b>The log-probabilities</b> are deterministic and favour the right answer most of the time,
 * so that a multiple-choice accuracy means something: a number that follows an arithmetic
 * question ("What is A + B?") gets -0.05 when it is the answer {@link StubModelServer#answer}
 * gives to that question (right, or wrong on purpose as the chat answers are), else about -4;
 * any other token gets a value between -0.2 and -4.2 drawn from a hash of it and the token
 * before it, so that a longer continuation is less likely, as with a real model. A token is the
 * greedy one (its own top log-probability) when its value is above -1; otherwise the top is
 * another token (the answer, after a question).
 *
 * <p>With {@code promptLogprobs} off it answers as llama.cpp's server does (llama.cpp #27174):
 * {@code echo} is ignored, and the log-probabilities are those of the generated token only, in
 * the chat shape ({@code logprobs.content}).
 */
final class TextCompletion implements StubAnswer {
    private static final Pattern QUESTION = Pattern.compile("What is -?\\d+ [-+*] -?\\d+\\?");
    private static final Pattern NUMBER = Pattern.compile(" ?-?\\d+");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final String model;
    private final List<String> prompts;
    private final boolean echo;
    private final Integer logprobs;
    private final int maxTokens;
    private final boolean promptLogprobs;
    private final int promptTokens;

    private TextCompletion(String model, List<String> prompts, boolean echo, Integer logprobs, int maxTokens,
                           boolean promptLogprobs) {
        this.model = model;
        this.prompts = prompts;
        this.echo = echo;
        this.logprobs = logprobs;
        this.maxTokens = maxTokens;
        this.promptLogprobs = promptLogprobs;
        int tokens = 0;
        for (String p : prompts) {
            tokens += StubTokenizer.tokens(p).size();
        }
        this.promptTokens = tokens;
    }

    /**
     * The answer to a request body.
     *
     * @return the answer
     * @throws IllegalArgumentException saying what is wrong with the request, for a 400
     */
    static TextCompletion answering(JsonNode body, boolean promptLogprobs) {
        if (body == null || !body.isObject()) {
            throw new IllegalArgumentException("the body must be a JSON object");
        }
        JsonNode prompt = body.get("prompt");
        List<String> prompts = new ArrayList<>();
        if (prompt != null && prompt.isTextual()) {
            prompts.add(prompt.asText());
        } else if (prompt != null && prompt.isArray() && !prompt.isEmpty()) {
            for (JsonNode p : prompt) {
                if (!p.isTextual()) {
                    throw new IllegalArgumentException("this stub takes prompts as text, not token ids");
                }
                prompts.add(p.asText());
            }
        } else {
            throw new IllegalArgumentException("prompt is required: a string or a list of strings");
        }
        JsonNode m = body.get("model");
        String model = m == null || !m.isTextual() ? "stub" : m.asText();
        JsonNode lp = body.get("logprobs");
        Integer logprobs = lp == null || lp.isNull() ? null : lp.asInt();
        JsonNode max = body.get("max_tokens");
        int maxTokens = max == null || max.isNull() ? 16 : max.asInt();
        if (maxTokens < 0) {
            throw new IllegalArgumentException("max_tokens must be at least 0, got " + maxTokens);
        }
        JsonNode echo = body.get("echo");
        return new TextCompletion(model, prompts, echo != null && echo.asBoolean(), logprobs, maxTokens,
                promptLogprobs);
    }

    @Override
    public int promptTokens() {
        return promptTokens;
    }

    @Override
    public String json(long id, long created) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("id", "cmpl-" + id).put("object", "text_completion").put("created", created).put("model", model);
        ArrayNode choices = root.putArray("choices");
        int completionTokens = 0;
        for (int i = 0; i < prompts.size(); i++) {
            completionTokens += choice(choices.addObject().put("index", i), prompts.get(i));
        }
        root.putObject("usage").put("prompt_tokens", promptTokens).put("completion_tokens", completionTokens)
                .put("total_tokens", promptTokens + completionTokens);
        try {
            return MAPPER.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a text completion", e);
        }
    }

    /** Fills one choice; returns the tokens it generated. */
    private int choice(ObjectNode choice, String prompt) {
        List<StubTokenizer.Token> tokens = StubTokenizer.tokens(prompt);
        List<Scored> scored = score(prompt, tokens, model);
        String favoured = favouredAt(prompt, prompt.length(), model);
        String generated = maxTokens == 0 ? "" : favoured != null ? " " + favoured : " the";
        double generatedLogprob = favoured != null ? -0.05 : -0.5;
        boolean echoed = echo && promptLogprobs;
        choice.put("text", echoed ? prompt + generated : generated);
        if (logprobs == null) {
            choice.putNull("logprobs");
        } else if (!promptLogprobs) {
            // llama.cpp's shape: the generated token's log-probability only, echo or not.
            ArrayNode content = choice.putObject("logprobs").putArray("content");
            if (!generated.isEmpty()) {
                ObjectNode t = content.addObject().put("token", generated).put("logprob", generatedLogprob);
                t.putArray("top_logprobs").addObject().put("token", generated).put("logprob", generatedLogprob);
            }
        } else {
            ObjectNode lp = choice.putObject("logprobs");
            ArrayNode texts = lp.putArray("tokens");
            ArrayNode values = lp.putArray("token_logprobs");
            ArrayNode tops = lp.putArray("top_logprobs");
            ArrayNode offsets = lp.putArray("text_offset");
            int promptLength = prompt.codePointCount(0, prompt.length());
            if (echoed) {
                for (int i = 0; i < tokens.size(); i++) {
                    StubTokenizer.Token t = tokens.get(i);
                    texts.add(t.text());
                    offsets.add(t.offset());
                    if (i == 0) {
                        values.addNull();
                        tops.addNull();
                    } else {
                        Scored s = scored.get(i);
                        values.add(s.logprob);
                        ObjectNode top = tops.addObject();
                        if (s.top != null) {
                            top.put(s.top, s.topLogprob);
                        }
                        top.put(t.text(), s.logprob);
                    }
                }
            }
            if (!generated.isEmpty()) {
                texts.add(generated);
                values.add(generatedLogprob);
                tops.addObject().put(generated, generatedLogprob);
                offsets.add(echoed ? promptLength : 0);
            }
        }
        choice.put("finish_reason", "length");
        return generated.isEmpty() ? 0 : 1;
    }

    /** A token's log-probability, and the top token when it is not the greedy one itself. */
    private record Scored(double logprob, String top, double topLogprob) {
    }

    /** The log-probability of every token of a prompt (the first is never read). */
    private static List<Scored> score(String prompt, List<StubTokenizer.Token> tokens, String model) {
        List<Scored> scored = new ArrayList<>(tokens.size());
        int chars = 0;
        String previous = "";
        for (StubTokenizer.Token t : tokens) {
            int h = Math.floorMod((previous + '\u0000' + t.text() + '\u0000' + model).hashCode(), 400);
            String favoured = NUMBER.matcher(t.text()).matches() ? favouredAt(prompt, chars, model) : null;
            if (favoured != null) {
                if (t.text().strip().equals(favoured)) {
                    scored.add(new Scored(-0.05, null, 0));
                } else {
                    scored.add(new Scored(-(4 + h / 100.0), " " + favoured, -0.05));
                }
            } else {
                double logprob = -(0.2 + h / 100.0);
                scored.add(logprob > -1.0 ? new Scored(logprob, null, 0)
                        : new Scored(logprob, " the".equals(t.text()) ? " of" : " the", -0.9));
            }
            chars += t.text().length();
            previous = t.text();
        }
        return scored;
    }

    /**
     * The number the stub favours at a place of the prompt: the answer to the last arithmetic
     * question that ends before it, when only spaces, a colon or "Answer" stand between; else null.
     */
    private static String favouredAt(String prompt, int end, String model) {
        Matcher m = QUESTION.matcher(prompt);
        m.region(0, end);
        String last = null;
        int lastEnd = -1;
        while (m.find()) {
            last = m.group();
            lastEnd = m.end();
        }
        if (last == null) {
            return null;
        }
        String between = prompt.substring(lastEnd, end).replace("Answer", "").replace(":", "").strip();
        if (!between.isEmpty()) {
            return null;
        }
        String answer = StubModelServer.answer(last, model, null);
        return answer.endsWith(".") ? answer.substring(0, answer.length() - 1) : answer;
    }
}
