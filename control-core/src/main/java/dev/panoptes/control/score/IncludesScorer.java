package dev.panoptes.control.score;

import java.util.Collections;
import java.util.List;

/**
 * Spec {@code includes}: the SQuAD-normalized expected answer occurs in the SQuAD-normalized
 * answer as a run of whole words, so "4" is not found in "14" but "new york" is found in
 * "It is New York.". Stateless and thread-safe.
 */
final class IncludesScorer extends SpecScorer {
    static final String SPEC = "includes";

    IncludesScorer() {
        super(SPEC);
    }

    @Override
    Score compare(String answer, String expected) {
        List<String> wanted = Normalization.squadTokens(expected);
        if (wanted.isEmpty()) {
            // An empty word list occurs in every answer; passing everything would hide a bad suite.
            return unusableExpected(expected, "is empty after normalization");
        }
        if (Collections.indexOfSubList(Normalization.squadTokens(answer), wanted) >= 0) {
            return Score.pass();
        }
        return new Score(0, "'" + Texts.clip(String.join(" ", wanted), 100)
                + "' does not occur as whole words in the normalized answer");
    }
}
