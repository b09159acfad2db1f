package dev.panoptes.control.score;

/**
 * An answer as a regex engine reads it, one character at a time, with a budget: past
 * {@code maxReads} characters read (the engine's steps, counted with its backtracking) it throws
 * {@link Exhausted}, so a pattern that backtracks catastrophically on one answer costs a bounded
 * amount of work instead of a core for hours. The count is deterministic: the same pattern on the
 * same answer always gets the same result, whatever the machine's load.
 *
 * <p>Not thread-safe: one per match.
 */
final class BudgetedText implements CharSequence {
    private final String text;
    private final long maxReads;
    private long reads;

    BudgetedText(String text, long maxReads) {
        this.text = text;
        this.maxReads = maxReads;
    }

    /** Thrown out of the engine when the budget is spent. */
    static final class Exhausted extends RuntimeException {
        Exhausted() {
            super(null, null, false, false);
        }
    }

    @Override
    public char charAt(int index) {
        if (++reads > maxReads) {
            throw new Exhausted();
        }
        return text.charAt(index);
    }

    @Override
    public int length() {
        return text.length();
    }

    /** A plain substring: what the engine hands out as a group is read by the caller, not the engine. */
    @Override
    public CharSequence subSequence(int start, int end) {
        return text.substring(start, end);
    }

    @Override
    public String toString() {
        return text;
    }
}
