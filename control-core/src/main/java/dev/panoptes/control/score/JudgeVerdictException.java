package dev.panoptes.control.score;

/**
 * A judge model's reply could not be read as a verdict: it held no JSON object, no score, a
 * score that is neither a number, a boolean nor "correct"/"incorrect", or a score outside
 * [0, 1]. The message says which and quotes the start of the reply.
 *
 * <p>The grade is unknown rather than zero, so callers should record the vignette as
 * ungraded (or retry the judge) instead of scoring it 0.
 */
public final class JudgeVerdictException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what was wrong, with the quoted reply */
    public JudgeVerdictException(String message) {
        super(message);
    }

    /**
     * @param message what was wrong, with the quoted reply
     * @param cause   the parse failure behind it
     */
    public JudgeVerdictException(String message, Throwable cause) {
        super(message, cause);
    }
}
