package dev.panoptes.control.score;

/**
 * The grade one answer earned.
 *
 * <p>Immutable and thread-safe.
 *
 * @param value       how correct the answer is, from 0 (wrong) to 1 (right); values in between are
 *                    partial credit
 * @param explanation why the scorer gave this value (what it read from the answer, what it
 *                    expected), or null when there is nothing to add to a plain pass or fail
 */
public record Score(double value, String explanation) {
    private static final Score PASS = new Score(1, null);
    private static final Score FAIL = new Score(0, null);

    /** @throws IllegalArgumentException when value is NaN or outside [0, 1] */
    public Score {
        // The negated form also rejects NaN, which fails every comparison.
        if (!(value >= 0 && value <= 1)) {
            throw new IllegalArgumentException("score value must be between 0 and 1, got " + value);
        }
    }

    /** Full credit, no explanation. */
    public static Score pass() {
        return PASS;
    }

    /** No credit, no explanation. */
    public static Score fail() {
        return FAIL;
    }

    /** {@link #pass()} when correct is true, else {@link #fail()}. */
    public static Score of(boolean correct) {
        return correct ? PASS : FAIL;
    }
}
