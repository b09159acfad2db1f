package dev.panoptes.control.score;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spec {@code regex:PATTERN}: group 1 of the last match of PATTERN in the answer, compared to
 * the expected answer after SQuAD normalization of both. The last match wins because models
 * often restate the question or their working before the final answer.
 *
 * <p><b>Budget.</b> Java's regex engine backtracks, and recurses once per repetition of some
 * groups (a group with alternatives under {@code +} or {@code *}, such as {@code (?:a|b)+}): a
 * pattern that is quick on a short answer can take hours on a long one, or overflow the stack.
 * Each answer gets a budget of {@value #READS_PER_CHAR} characters read per character of the
 * answer, plus {@value #BASE_READS} (a pattern may look at each character that many times, which
 * no sensible pattern comes near; at the engine's speed well under a second of a core). An
 * answer that would take more, or that overflows the stack, is not scored: the scorer throws
 * {@link UnscorableAnswerException} saying so, and the answer is stored unscored with that reason.
 * The engine is kept rather than replaced with a linear-time one (RE2/J): a suite's patterns mean
 * what they mean in Java (lookaround, backreferences, possessive quantifiers), and the budget
 * bounds the cost without changing any answer's score that is within it.
 *
 * <p>Immutable and thread-safe: the compiled pattern is shared, each call makes its own
 * matcher.
 */
final class RegexScorer extends SpecScorer {
    static final String PREFIX = "regex:";
    /** Characters the engine may read per character of the answer. */
    static final long READS_PER_CHAR = 1_000;
    /** Characters the engine may read on any answer, however short. */
    static final long BASE_READS = 1_000_000;

    private final Pattern pattern;

    /**
     * @throws IllegalArgumentException when the pattern is empty, does not compile or has no
     *                                  capturing group; the message says which
     */
    RegexScorer(String regex) {
        super(PREFIX + regex);
        if (regex.isEmpty()) {
            throw new IllegalArgumentException("the pattern is empty");
        }
        try {
            this.pattern = Pattern.compile(regex);
        } catch (java.util.regex.PatternSyntaxException e) {
            throw new IllegalArgumentException("pattern /" + regex + "/ does not compile: "
                    + e.getDescription() + " near index " + e.getIndex(), e);
        }
        if (pattern.matcher("").groupCount() < 1) {
            throw new IllegalArgumentException("pattern /" + regex
                    + "/ has no capturing group; wrap the part to compare in ( )");
        }
    }


    @Override
    Score compare(String answer, String expected) {
        String captured = lastCapture(answer);
        if (captured == null) {
            return new Score(0, "no match for /" + pattern.pattern() + "/");
        }
        boolean correct = Normalization.squadNormalize(captured).equals(Normalization.squadNormalize(expected));
        String explanation = "captured '" + Texts.clip(captured, 100) + "'"
                + (correct ? "" : ", expected '" + Texts.clip(expected, 100) + "'");
        return new Score(correct ? 1 : 0, explanation);
    }

    /**
     * Group 1 of the last match in which group 1 took part, or null when there is none.
     *
     * @throws UnscorableAnswerException when matching would take more than the budget, or
     *                                   overflows the stack
     */
    private String lastCapture(String answer) {
        long budget = BASE_READS + READS_PER_CHAR * answer.length();
        Matcher matcher = pattern.matcher(new BudgetedText(answer, budget));
        String last = null;
        try {
            while (matcher.find()) {
                if (matcher.group(1) != null) {
                    last = matcher.group(1);
                }
            }
        } catch (BudgetedText.Exhausted e) {
            throw new UnscorableAnswerException(String.format(java.util.Locale.ROOT, "regex /%s/ gave up on a"
                    + " %,d-character answer after reading %,d characters (it backtracks too much on it); simplify"
                    + " the pattern (anchor it, or make what it repeats unambiguous)", Texts.clip(pattern.pattern(),
                    100), answer.length(), budget));
        } catch (StackOverflowError e) {
            // Java's engine recurses once per repetition of a group with alternatives: the stack
            // is unwound by now, and nothing but this match was in progress on it.
            throw new UnscorableAnswerException(String.format(java.util.Locale.ROOT, "regex /%s/ overflowed the"
                    + " stack on a %,d-character answer (Java's engine recurses once per repetition of a group with"
                    + " alternatives); repeat a character class instead, as [ab]+ for (?:a|b)+",
                    Texts.clip(pattern.pattern(), 100), answer.length()));
        }
        return last;
    }

}
