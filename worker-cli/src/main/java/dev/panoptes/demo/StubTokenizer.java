package dev.panoptes.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How {@link StubModelServer} cuts text into tokens for {@code /v1/completions} and
 * {@code /tokenize}: in the manner of GPT-2's byte-pair pre-tokenizer, a word, a number or a run
 * of punctuation with the one space before it is a token ({@code "What is 17 + 25?"} is
 * {@code What}, {@code " is"}, {@code " 17"}, {@code " +"}, {@code " 25"}, {@code "?"}), and
 * whitespace that no word follows is a token of its own. So, as with real tokenizers, a space at
 * the end of a context joins the first word of the continuation: {@code "Answer: "} followed by
 * {@code "Paris"} is one token {@code " Paris"} that spans the boundary.
 *
 * <p>Offsets are in Unicode code points, as Python's string indices (and so vLLM's
 * {@code text_offset}) count them. Stateless and thread-safe.
 */
final class StubTokenizer {
    private static final Pattern TOKEN = Pattern.compile(
            " ?\\p{L}+| ?-?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
    /** The size of the vocabulary token ids are drawn from. */
    static final int VOCABULARY = 50_000;

    private StubTokenizer() {
    }

    /** One token: its text and where it starts in the text, in code points. */
    record Token(String text, int offset) {
        /** Its id in the stub's vocabulary: a stable hash of its text. */
        int id() {
            return Math.floorMod(text.hashCode(), VOCABULARY);
        }
    }

    /** The tokens of {@code text}, in order; their texts joined give the text back. */
    static List<Token> tokens(String text) {
        List<Token> tokens = new ArrayList<>();
        Matcher m = TOKEN.matcher(text);
        int chars = 0;
        int codePoints = 0;
        while (m.find()) {
            codePoints += text.codePointCount(chars, m.start());
            chars = m.start();
            tokens.add(new Token(m.group(), codePoints));
        }
        return tokens;
    }
}
