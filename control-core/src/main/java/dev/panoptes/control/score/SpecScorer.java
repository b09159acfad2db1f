package dev.panoptes.control.score;

import java.util.Objects;

/**
 * What every scorer does alike: it is named by its spec (which is also what it prints as), it
 * refuses a null answer or expected answer before comparing them, and it words an unusable
 * expected answer the same way. Subclasses are stateless and thread-safe.
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

    /**
     * No credit because the suite's expected answer cannot be scored this way (the suite is at
     * fault, not the answer): says so with the expected answer, clipped, and {@code why}.
     */
    static Score unusableExpected(String expected, String why) {
        return new Score(0, "expected answer '" + Texts.clip(expected, 100) + "' " + why);
    }

    @Override
    public final String toString() {
        return spec;
    }
}
