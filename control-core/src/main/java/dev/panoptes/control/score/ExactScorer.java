package dev.panoptes.control.score;

import java.util.Objects;

/**
 * Spec {@code exact}: the answer equals the expected answer once surrounding whitespace is
 * stripped, case-sensitively. This is the behaviour Panoptes had before scorers existed, so
 * it stays the default. Stateless and thread-safe.
 */
final class ExactScorer implements Scorer {
    static final String SPEC = "exact";

    @Override
    public String spec() {
        return SPEC;
    }

    @Override
    public Score score(String answer, String expected) {
        Objects.requireNonNull(answer, "answer");
        Objects.requireNonNull(expected, "expected");
        return Score.of(answer.strip().equals(expected.strip()));
    }

    @Override
    public String toString() {
        return SPEC;
    }
}
