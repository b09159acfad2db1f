package dev.panoptes.control.score;

import java.util.Objects;

/**
 * Spec {@code normalized}: SQuAD exact match, that is equality after
 * {@link Normalization#squadNormalize(String)} on both sides. Stateless and thread-safe.
 */
final class NormalizedScorer implements Scorer {
    static final String SPEC = "normalized";

    @Override
    public String spec() {
        return SPEC;
    }

    @Override
    public Score score(String answer, String expected) {
        Objects.requireNonNull(answer, "answer");
        Objects.requireNonNull(expected, "expected");
        String normalizedAnswer = Normalization.squadNormalize(answer);
        String normalizedExpected = Normalization.squadNormalize(expected);
        if (normalizedAnswer.equals(normalizedExpected)) {
            return Score.pass();
        }
        return new Score(0, "normalized answer '" + Texts.clip(normalizedAnswer, 100)
                + "' differs from normalized expected '" + Texts.clip(normalizedExpected, 100) + "'");
    }

    @Override
    public String toString() {
        return SPEC;
    }
}
