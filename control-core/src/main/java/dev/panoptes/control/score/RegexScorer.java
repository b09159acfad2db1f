package dev.panoptes.control.score;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spec {@code regex:PATTERN}: group 1 of the last match of PATTERN in the answer, compared to
 * the expected answer after SQuAD normalization of both. The last match wins because models
 * often restate the question or their working before the final answer.
 *
 * <p>Immutable and thread-safe: the compiled pattern is shared, each call makes its own
 * matcher.
 */
final class RegexScorer extends SpecScorer {
    static final String PREFIX = "regex:";

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

    /** Group 1 of the last match in which group 1 took part, or null when there is none. */
    private String lastCapture(String answer) {
        Matcher matcher = pattern.matcher(answer);
        String last = null;
        while (matcher.find()) {
            if (matcher.group(1) != null) {
                last = matcher.group(1);
            }
        }
        return last;
    }

}
