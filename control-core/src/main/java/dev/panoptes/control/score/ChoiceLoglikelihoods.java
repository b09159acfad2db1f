package dev.panoptes.control.score;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.Choices;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a model answered to a multiple-choice vignette scored by log-likelihood: per choice, the
 * log-probability of its continuation after the prompt (the sum over the continuation's tokens)
 * and whether every one of those tokens was the model's top one ({@code is_greedy}), with the
 * choice's length in characters and in UTF-8 bytes. Stored as the answer's text, as JSON:
 *
 * <pre>{"resps":[[-1.25,true],[-3.5,false]],"chars":[2,2],"bytes":[2,2],"chosen":0,
 *  "continuations":[" 12"," 13"]}</pre>
 *
 * ({@code resps} as lm-evaluation-harness logs them; {@code chosen} is the choice of highest
 * log-likelihood, for people reading the answer; {@code continuations} the text each choice was
 * scored as, after the prompt, so that an export can give lm-eval's {@code (context,
 * continuation)} arguments and the choices; answers stored before it was written lack it), so
 * that every figure is recomputable from the stored answer alone: {@code acc} picks the highest log-likelihood, {@code acc_norm} the highest
 * per character of the choice and {@code acc_bytes} the highest per byte, each the first of
 * equals, as lm-eval's {@code np.argmax} does.
 *
 * @param loglikelihoods one per choice, in the vignette's order
 * @param greedy         one per choice
 * @param chars          each choice's length in Unicode code points (Python's {@code len})
 * @param bytes          each choice's length in UTF-8 bytes
 * @param continuations  each choice's continuation as scored (its delimiter, then the choice), or
 *                       empty when unknown (an answer stored before they were recorded)
 */
public record ChoiceLoglikelihoods(List<Double> loglikelihoods, List<Boolean> greedy, List<Integer> chars,
                                   List<Integer> bytes, List<String> continuations) {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * @throws IllegalArgumentException when the lists are empty or differ in length (continuations
     *                                  may be empty instead)
     */
    public ChoiceLoglikelihoods {
        loglikelihoods = List.copyOf(loglikelihoods);
        greedy = List.copyOf(greedy);
        chars = List.copyOf(chars);
        bytes = List.copyOf(bytes);
        continuations = continuations == null ? List.of() : List.copyOf(continuations);
        int n = loglikelihoods.size();
        if (n == 0 || greedy.size() != n || chars.size() != n || bytes.size() != n) {
            throw new IllegalArgumentException("one log-likelihood, greedy flag, character and byte count per choice,"
                    + " got " + n + ", " + greedy.size() + ", " + chars.size() + " and " + bytes.size());
        }
        if (!continuations.isEmpty() && continuations.size() != n) {
            throw new IllegalArgumentException("one continuation per choice or none, got " + continuations.size()
                    + " for " + n + " choices");
        }
    }

    /** The answer for {@code choices}, given each choice's log-likelihood and greedy flag. */
    public static ChoiceLoglikelihoods of(Choices choices, List<Double> loglikelihoods, List<Boolean> greedy) {
        List<Integer> chars = new ArrayList<>();
        List<Integer> bytes = new ArrayList<>();
        List<String> continuations = new ArrayList<>();
        for (int i = 0; i < choices.size(); i++) {
            String c = choices.texts().get(i);
            chars.add(c.codePointCount(0, c.length()));
            bytes.add(c.getBytes(StandardCharsets.UTF_8).length);
            continuations.add(choices.continuation(i));
        }
        return new ChoiceLoglikelihoods(loglikelihoods, greedy, chars, bytes, continuations);
    }

    /**
     * True for the answer to one continuation (lm-eval's {@code loglikelihood} request): one
     * choice, whose log-likelihood and greedy flag are the figures, not a choice among several.
     */
    public boolean isContinuation() {
        return loglikelihoods.size() == 1;
    }

    /** The choice of highest log-likelihood (the first of equals). */
    public int chosen() {
        return argmax(1);
    }

    /** The choice of highest log-likelihood per character. */
    public int chosenPerChar() {
        return argmax(2);
    }

    /** The choice of highest log-likelihood per byte. */
    public int chosenPerByte() {
        return argmax(3);
    }

    private int argmax(int by) {
        int best = 0;
        double bestValue = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < loglikelihoods.size(); i++) {
            double v = loglikelihoods.get(i) / (by == 1 ? 1.0 : by == 2 ? chars.get(i) : bytes.get(i));
            if (v > bestValue) {
                best = i;
                bestValue = v;
            }
        }
        return best;
    }

    /** The JSON stored as the answer's text (see the class documentation). */
    public String toJson() {
        ObjectNode root = MAPPER.createObjectNode();
        ArrayNode resps = root.putArray("resps");
        for (int i = 0; i < loglikelihoods.size(); i++) {
            resps.addArray().add(loglikelihoods.get(i)).add(greedy.get(i));
        }
        chars.forEach(root.putArray("chars")::add);
        bytes.forEach(root.putArray("bytes")::add);
        root.put("chosen", chosen());
        if (!continuations.isEmpty()) {
            continuations.forEach(root.putArray("continuations")::add);
        }
        try {
            return MAPPER.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write log-likelihoods", e);
        }
    }

    /**
     * Reads a stored answer.
     *
     * @throws IllegalArgumentException saying what is wrong when the text is not such JSON
     */
    public static ChoiceLoglikelihoods parse(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the answer is not the JSON of log-likelihoods: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject() || !root.path("resps").isArray() || !root.path("chars").isArray()
                || !root.path("bytes").isArray()) {
            throw new IllegalArgumentException("the answer is not the JSON of log-likelihoods (resps, chars, bytes):"
                    + " it was not asked as multiple choice");
        }
        List<Double> lls = new ArrayList<>();
        List<Boolean> greedy = new ArrayList<>();
        for (JsonNode r : root.get("resps")) {
            if (!r.isArray() || r.size() != 2 || !r.get(0).isNumber() || !r.get(1).isBoolean()) {
                throw new IllegalArgumentException("each of resps must be [loglikelihood, is_greedy], got " + r);
            }
            lls.add(r.get(0).asDouble());
            greedy.add(r.get(1).asBoolean());
        }
        List<Integer> chars = new ArrayList<>();
        root.get("chars").forEach(n -> chars.add(n.asInt()));
        List<Integer> bytes = new ArrayList<>();
        root.get("bytes").forEach(n -> bytes.add(n.asInt()));
        List<String> continuations = new ArrayList<>();
        root.path("continuations").forEach(n -> continuations.add(n.asText()));
        return new ChoiceLoglikelihoods(lls, greedy, chars, bytes, continuations);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "ChoiceLoglikelihoods%s", toJson());
    }
}
