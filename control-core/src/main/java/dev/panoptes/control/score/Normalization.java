package dev.panoptes.control.score;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Answer normalization as done by the SQuAD evaluation script, so that scores compare with
 * published numbers.
 *
 * <p>Stateless and thread-safe.
 */
public final class Normalization {
    // \p{Punct} without UNICODE_CHARACTER_CLASS is exactly Python's string.punctuation
    // (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~), which includes ASCII symbols such as $ and +.
    // \p{P} adds Unicode punctuation: curly quotes, dashes, CJK full stops.
    private static final Pattern PUNCTUATION = Pattern.compile("[\\p{Punct}\\p{P}]");
    // Python 3's \b is Unicode-aware; (?U) makes Java's agree.
    private static final Pattern ARTICLES = Pattern.compile("(?U)\\b(?:a|an|the)\\b");
    private static final Pattern WHITESPACE = Pattern.compile("(?U)\\s+");

    private Normalization() {
    }

    /**
     * SQuAD's {@code normalize_answer}: lower-cases, deletes punctuation (without putting a
     * space in its place, so "New-York" becomes "newyork"), removes the whole words a, an and
     * the, and collapses runs of whitespace to one space with none at either end.
     *
     * @param text any text
     * @return the normalized text, possibly empty (for example for "The.")
     * @throws NullPointerException when text is null
     */
    public static String squadNormalize(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        String noPunctuation = PUNCTUATION.matcher(lower).replaceAll("");
        String noArticles = ARTICLES.matcher(noPunctuation).replaceAll(" ");
        return String.join(" ", tokens(noArticles));
    }

    /** The whitespace-separated words of the SQuAD-normalized text; empty when there are none. */
    static List<String> squadTokens(String text) {
        return tokens(squadNormalize(text));
    }

    private static List<String> tokens(String text) {
        return Arrays.stream(WHITESPACE.split(text)).filter(t -> !t.isEmpty()).toList();
    }
}
