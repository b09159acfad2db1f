package dev.panoptes.control.score;

/**
 * A scorer could not score this answer (not: the answer is wrong): its pattern would take too
 * long on it, say. The answer is stored unscored with this message as the reason, and stays out
 * of every accuracy figure; the run goes on. Thrown by {@link Scorer#score}; {@link RunScoring}
 * turns it into an unscored entry.
 */
public final class UnscorableAnswerException extends RuntimeException {
    /** @param message why, in words a suite's author can act on */
    public UnscorableAnswerException(String message) {
        super(message, null, false, false);
    }
}
