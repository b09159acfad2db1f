package dev.panoptes.control.score;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds which multiple-choice letter (A to J) an answer picked.
 *
 * <p>Rules are tried in order and the first that finds a letter wins; within a rule the last
 * occurrence wins, because models restate and correct themselves before concluding:
 * <ol>
 *   <li>the whole answer is one letter, possibly wrapped: "B", "(b)", "B.", "**B**";</li>
 *   <li>"answer" followed by a letter: "Answer: B", "The answer is (c).", "**Answer:** B",
 *       "the correct answer would be option D"; or LaTeX {@code \boxed{B}};</li>
 *   <li>option, choice or letter followed by is, :, or =: "the correct option is D";</li>
 *   <li>option or choice directly followed by a letter: "I pick option D";</li>
 *   <li>a letter in parentheses or bold: "(B)", "**B**", "**B. Paris**";</li>
 *   <li>a letter at the start followed by ) . : or ;: "B) Paris", "C: because";</li>
 *   <li>the last standalone capital A to J anywhere.</li>
 * </ol>
 *
 * <p>A bare "A" or "a" followed by a lower-case word ("A good question", "is a dog") is taken
 * as the English article and a bare "I" followed by one ("I think") as the pronoun, not as
 * choices, unless that word is one that usually follows a choice ("A is correct", "A because").
 * Lower-case letters count only in rules 1 to 6, where the context says a letter is meant.
 *
 * <p>Stateless and thread-safe.
 */
final class ChoiceExtraction {
    // A letter possibly wrapped as (B), [B], **B**, **(B)**, never the first letter of a word.
    private static final String LETTER = "(?:\\(\\s*([A-Ja-j])\\s*\\)|\\[\\s*([A-Ja-j])\\s*\\]"
            + "|\\*\\*\\s*\\(?([A-Ja-j])\\)?[.:]?\\s*\\*\\*|([A-Ja-j])(?![\\p{L}\\p{N}'\u2019]))";
    private static final String COPULA = "(?:is|would\\s+be|should\\s+be|will\\s+be|must\\s+be)";

    private static final Pattern WHOLE = Pattern.compile(
            "[\\s(\\[*_\"'`]*([A-Ja-j])[\\s)\\].:*_\"'`]*");
    private static final Pattern ANSWER_KEYWORD = Pattern.compile(
            "(?i)\\banswer\\b[*_]*(?:\\s+" + COPULA + ")?\\s*[:=\\-]?[\\s*_]*"
                    + "(?:(?:option|choice|letter)\\s*[:\\-]?\\s*)?" + LETTER);
    private static final Pattern BOXED = Pattern.compile(
            "\\\\boxed\\{\\s*(?:\\\\text(?:bf)?\\{\\s*)?\\(?\\s*([A-Ja-j])\\s*\\)?\\s*\\}");
    private static final Pattern OPTION_IS = Pattern.compile(
            "(?i)\\b(?:option|choice|letter)(?:\\s+" + COPULA + "\\s*[:\\-]?|\\s*[:=])[\\s*_]*" + LETTER);
    private static final Pattern OPTION_BARE = Pattern.compile("(?i)\\b(?:option|choice)\\s+" + LETTER);
    private static final Pattern WRAPPED = Pattern.compile(
            "\\(\\s*([A-Ja-j])\\s*\\)|\\*\\*\\s*\\(?([A-Ja-j])\\)?[.:]?\\s*\\*\\*|\\*\\*\\s*\\(?([A-J])[).:]\\s");
    private static final Pattern LEAD = Pattern.compile("^[\\s*_>#\"'`]*\\(?([A-Ja-j])[).:;](?![\\p{L}\\p{N}])");
    private static final Pattern STANDALONE_CAPITAL = Pattern.compile(
            "(?<![\\p{L}\\p{N}'\u2019\\-])([A-J])(?![\\p{L}\\p{N}'\u2019\\-])");

    private static final List<Pattern> RULES = List.of(
            ANSWER_KEYWORD, BOXED, OPTION_IS, OPTION_BARE, WRAPPED, LEAD, STANDALONE_CAPITAL);

    private static final Pattern NEXT_WORD = Pattern.compile("\\s+(\\p{L}+)");
    // Words that follow a choice letter far more often than they follow the article "a" or the
    // pronoun "I": "A is correct", "A because ...", "option a, since ...".
    private static final Set<String> AFTER_A_CHOICE = Set.of(
            "is", "was", "seems", "looks", "because", "since", "as", "and", "or", "but", "which",
            "that", "for", "so", "then", "being");

    private ChoiceExtraction() {
    }

    /** The upper-case letter the answer picked, or empty when no rule finds one. */
    static Optional<Character> chosenLetter(String answer) {
        Optional<Character> whole = wholeLetter(answer);
        if (whole.isPresent()) {
            return whole;
        }
        for (Pattern rule : RULES) {
            Optional<Character> found = lastLetter(rule, answer);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * The letter of an expected answer: one letter, possibly wrapped ("B", "(b)"), or a letter
     * at the start followed by ) . : or ; ("B) Paris"). Empty when it is neither.
     */
    static Optional<Character> expectedLetter(String expected) {
        Optional<Character> whole = wholeLetter(expected);
        return whole.isPresent() ? whole : lastLetter(LEAD, expected);
    }

    private static Optional<Character> wholeLetter(String text) {
        Matcher matcher = WHOLE.matcher(text);
        return matcher.matches() ? Optional.of(upper(matcher.group(1))) : Optional.empty();
    }

    private static Optional<Character> lastLetter(Pattern rule, String text) {
        Matcher matcher = rule.matcher(text);
        Character last = null;
        while (matcher.find()) {
            for (int group = 1; group <= matcher.groupCount(); group++) {
                String letter = matcher.group(group);
                if (letter != null) {
                    if (!isEnglishWord(letter, text, matcher.end(group))) {
                        last = upper(letter);
                    }
                    break;
                }
            }
        }
        return Optional.ofNullable(last);
    }

    /**
     * True when the letter ending at end is the article a/A or the pronoun I rather than a
     * choice: it is followed by a space and a lower-case word that does not usually follow a
     * choice. A wrapped letter is followed by ) or * and so is never a word.
     */
    private static boolean isEnglishWord(String letter, String text, int end) {
        if (!letter.equalsIgnoreCase("a") && !letter.equals("I")) {
            return false;
        }
        Matcher next = NEXT_WORD.matcher(text).region(end, text.length());
        if (!next.lookingAt()) {
            return false;
        }
        String word = next.group(1);
        return Character.isLowerCase(word.charAt(0)) && !AFTER_A_CHOICE.contains(word);
    }

    private static char upper(String letter) {
        return letter.toUpperCase(Locale.ROOT).charAt(0);
    }
}
