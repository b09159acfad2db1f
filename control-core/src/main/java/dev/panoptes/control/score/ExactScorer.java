package dev.panoptes.control.score;


/**
 * Spec {@code exact}: the answer equals the expected answer once surrounding whitespace is
 * stripped, case-sensitively. This is the behaviour Panoptes had before scorers existed, so
 * it stays the default. Stateless and thread-safe.
 */
final class ExactScorer extends SpecScorer {
    static final String SPEC = "exact";

    ExactScorer() {
        super(SPEC);
    }


    @Override
    Score compare(String answer, String expected) {
        return Score.of(answer.strip().equals(expected.strip()));
    }

}
