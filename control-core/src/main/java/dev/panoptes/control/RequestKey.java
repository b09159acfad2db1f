package dev.panoptes.control;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The one definition of "the same request": a stable hash over exactly what a worker sends to the
 * model API for one vignette, and the epoch it is asked in. Two requests with the same key ask
 * the same model the same thing in the same way, so an answer stored for one (in any run of a
 * database) may stand for the other; the response cache looks answers up by it, and every record
 * of a {@link #cacheable} request carries the key of the request that produced it.
 *
 * <p>The key covers the model the job names, the messages as sent (the system prompt, then the
 * vignette's turns, few-shot examples included, each role and content), the temperature, the
 * most tokens, the seed (which {@code JobPlan} varies per epoch) and the epoch. It covers nothing
 * else: not the vignette's id, expected answer, metadata or scorer (they do not reach the model),
 * nor the run, its label or the job size. A job that names no model has no key (null): its worker
 * picks the model, so the coordinator cannot know what would answer.
 *
 * <p>The key is the SHA-256 (64 hex characters) of a versioned text in which every string is
 * JSON-quoted, so that no value can pass for another field; a change to what the key covers
 * changes its version line, so that old keys stop matching rather than match wrongly.
 *
 * <p>Stateless; any thread.
 */
public final class RequestKey {
    private static final String VERSION = "panoptes request key 1";

    private RequestKey() {
    }

    /**
     * True for the only requests whose answer is worth keeping for another run: temperature 0,
     * given explicitly. At any other temperature (or the API's default, 1 for OpenAI-compatible
     * APIs) the model samples, and a stored answer is one draw, not the answer.
     */
    public static boolean cacheable(SpecParams params) {
        return params.temperature() != null && params.temperature() == 0.0;
    }

    /**
     * The key a record keeps for its request: {@link #of(Job, Vignette)} for a
     * {@link #cacheable} request, else null. Only such keys are ever looked up, and a key the store
     * indexes costs a write at a random place of the index, several times the row's own cost.
     */
    public static String stored(Job job, Vignette vignette) {
        return cacheable(job.spec().params()) ? of(job, vignette) : null;
    }

    /**
     * The key of one vignette's request in a job: the job's model and parameters, the vignette's
     * turns, the job's epoch; null when the job names no model.
     */
    public static String of(Job job, Vignette vignette) {
        String key = of(job.model(), job.spec().params(), vignette.turns(), job.epoch());
        return key == null || vignette.choices() == null ? key : withChoices(key, vignette.choices());
    }

    /**
     * The key of a multiple-choice vignette's request: the key of its prompt's, with each
     * continuation asked after it. Its own version line keeps it from ever equalling a generation
     * request's key.
     */
    static String withChoices(String promptKey, Choices choices) {
        StringBuilder text = new StringBuilder(256).append(VERSION).append(" loglikelihood\nprompt ")
                .append(promptKey);
        for (int i = 0; i < choices.size(); i++) {
            text.append("\ncontinuation ").append(quote(choices.continuation(i)));
        }
        return HexFormat.of().formatHex(sha256(text.toString().getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The key of a request.
     *
     * @param model  the model asked; null for none (the key is then null)
     * @param params the system prompt, temperature, most tokens and seed (its model is not read)
     * @param turns  the messages after the system prompt, as sent
     * @param epoch  the epoch it is asked in
     * @return 64 hex characters, or null when {@code model} is null
     */
    public static String of(String model, SpecParams params, List<ChatMessage> turns, int epoch) {
        if (model == null) {
            return null;
        }
        StringBuilder text = new StringBuilder(256).append(VERSION)
                .append("\nmodel ").append(quote(model));
        // The messages as sent (SystemMessages): the same text as before for a chat without a system message.
        for (ChatMessage m : SystemMessages.join(params.system(), turns)) {
            text.append("\nmessage ").append(quote(m.role())).append(' ').append(quote(m.content()));
        }
        text.append("\ntemperature ").append(params.temperature())
                .append("\nmax-tokens ").append(params.maxTokens())
                .append("\nseed ").append(params.seed())
                .append("\nepoch ").append(epoch);
        return HexFormat.of().formatHex(sha256(text.toString().getBytes(StandardCharsets.UTF_8)));
    }

    /** The text as a JSON string: quotes, backslashes and control characters escaped. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
