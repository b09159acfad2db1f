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
 * <p>The key covers the model server that answers ({@link SpecParams#modelSource()}: the model
 * API's endpoint, or the {@code --model-id} a user gives a fleet of identical servers), the model
 * the job names, the messages as sent (the system prompt, then the vignette's turns, few-shot
 * examples included, each role and content), the temperature, the most tokens, the seed (which
 * {@code JobPlan} varies per epoch), {@code top_p}, the stop sequences, the extra request-body
 * fields and the epoch. It covers nothing else: not the vignette's id, expected answer, metadata
 * or scorer (they do not reach the model), nor the run, its label or the job size. A job that
 * names no model has no key (null): its worker picks the model, so the coordinator cannot know what
 * would answer; nor has a job whose model source is unknown (a coordinator's run without
 * {@code --model-id}: its workers may each ask another server), so that an answer is only ever
 * served for a call that would have reached the same model.
 *
 * <p>The key is the SHA-256 (64 hex characters) of a versioned text in which every string is
 * JSON-quoted, so that no value can pass for another field, and a lone UTF-16 surrogate (which
 * UTF-8 cannot encode, and would otherwise turn into the same {@code ?} as any other) is escaped
 * as a JSON escape (backslash, u, four hex digits), so that two different texts never give one
 * key; a change to what the key covers changes its version line, so that old keys stop matching rather than match wrongly.
 * (Version 1 keys named no model source: their answers are never served again.)
 *
 * <p>Stateless; any thread.
 */
public final class RequestKey {
    private static final String VERSION = "panoptes request key 2";

    private RequestKey() {
    }

    /**
     * True for the only requests whose answer is worth keeping for another run: temperature 0,
     * given explicitly, to a known model source. At any other temperature (or the API's default, 1
     * for OpenAI-compatible APIs) the model samples, and a stored answer is one draw, not the
     * answer; with no model source, nobody can say which model it was.
     */
    public static boolean cacheable(SpecParams params) {
        return params.temperature() != null && params.temperature() == 0.0 && params.modelSource() != null;
    }

    /**
     * The key a record keeps for its request: {@link #of(Job, Vignette)} for a
     * {@link #cacheable} request, else null. Only such keys are ever looked up, and a key the store
     * keeps costs it an entry to find it by: on PostgreSQL a write at a random place of the index,
     * several times the row's own cost; on SQLite a share of a sorted bulk insert
     * ({@code dev.panoptes.control.store.RequestKeyIndex}).
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
     * @param params the model source, system prompt, temperature, most tokens, seed, top_p, stop
     *               sequences and extra body fields (its model is not read)
     * @param turns  the messages after the system prompt, as sent
     * @param epoch  the epoch it is asked in
     * @return 64 hex characters, or null when {@code model} or the model source is null
     */
    public static String of(String model, SpecParams params, List<ChatMessage> turns, int epoch) {
        if (model == null || params.modelSource() == null) {
            return null;
        }
        StringBuilder text = new StringBuilder(256).append(VERSION)
                .append("\nsource ").append(quote(params.modelSource()))
                .append("\nmodel ").append(quote(model));
        // The messages as sent (SystemMessages): the same text as before for a chat without a system message.
        for (ChatMessage m : SystemMessages.join(params.system(), turns)) {
            text.append("\nmessage ").append(quote(m.role())).append(' ').append(quote(m.content()));
        }
        text.append("\ntemperature ").append(params.temperature())
                .append("\nmax-tokens ").append(params.maxTokens())
                .append("\nseed ").append(params.seed())
                .append("\ntop-p ").append(params.topP());
        if (params.stop() != null) {
            text.append("\nstop");
            for (String s : params.stop()) {
                text.append(' ').append(quote(s));
            }
        }
        if (params.extraBody() != null) {
            text.append("\nextra-body ").append(quote(params.extraBody()));
        }
        text.append("\nepoch ").append(epoch);
        return HexFormat.of().formatHex(sha256(text.toString().getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The text as a JSON string: quotes, backslashes and control characters escaped, and so is a
     * lone surrogate (a high one not followed by a low one, or a low one not preceded by a high
     * one), which UTF-8 cannot encode: the text's bytes then tell any two texts apart.
     */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || lone(s, i)) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** True when the char at {@code i} is a surrogate that is not half of a pair. */
    private static boolean lone(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(s.charAt(i - 1));
        }
        return false;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
