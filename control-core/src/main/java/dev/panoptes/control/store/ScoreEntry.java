package dev.panoptes.control.store;

/**
 * How a stored answer was scored.
 *
 * @param scorer      the scorer's spec, such as {@code "normalized"} or {@code "judge:gpt-4o"}
 * @param score       in [0, 1]; null while the answer waits for its grade, or when its grade
 *                    could not be had (then {@code explanation} says why)
 * @param explanation why, when the scorer says (a judge's reasoning, the number a numeric scorer
 *                    read); null otherwise
 */
public record ScoreEntry(String scorer, Double score, String explanation) {
    /** @throws IllegalArgumentException when the scorer is missing or the score is outside [0, 1] */
    public ScoreEntry {
        if (scorer == null || scorer.isEmpty()) {
            throw new IllegalArgumentException("a score needs its scorer's name");
        }
        if (score != null && !(score >= 0 && score <= 1)) {
            throw new IllegalArgumentException("a score must be between 0 and 1, got " + score);
        }
    }
}
