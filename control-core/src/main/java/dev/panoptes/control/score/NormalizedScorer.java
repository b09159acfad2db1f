package dev.panoptes.control.score;


/**
 * Spec {@code normalized}: SQuAD exact match, that is equality after
 * {@link Normalization#squadNormalize(String)} on both sides. Stateless and thread-safe.
 */
final class NormalizedScorer extends SpecScorer {
    static final String SPEC = "normalized";

    NormalizedScorer() {
        super(SPEC);
    }


    @Override
    Score compare(String answer, String expected) {
        String normalizedAnswer = Normalization.squadNormalize(answer);
        String normalizedExpected = Normalization.squadNormalize(expected);
        if (normalizedAnswer.equals(normalizedExpected)) {
            return Score.pass();
        }
        return new Score(0, "normalized answer '" + Texts.clip(normalizedAnswer, 100)
                + "' differs from normalized expected '" + Texts.clip(normalizedExpected, 100) + "'");
    }

}
