package dev.panoptes.control.score;

import java.util.Objects;

/**
 * What every scorer does alike: it is named by its spec (which is also what it prints as), and
 * it refuses a null answer or expected answer before comparing them.
 */
abstract class SpecScorer implements Scorer {
    private final String spec;

    SpecScorer(String spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
    }

    @Override
    public final String spec() {
        return spec;
    }

    @Override
    public final Score score(String answer, String expected) {
        Objects.requireNonNull(answer, "answer");
        Objects.requireNonNull(expected, "expected");
        return compare(answer, expected);
    }

    /** Scores a non-null answer against a non-null expected answer. */
    abstract Score compare(String answer, String expected);

    @Override
    public final String toString() {
        return spec;
    }
}
