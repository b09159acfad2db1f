package dev.panoptes.control.score;

/**
 * Grades a model's answer against a reference answer without calling a model.
 *
 * <p>Implementations are immutable and thread-safe: one instance may score many answers from
 * many threads at once. They never throw for odd answers or unusable expected answers; such
 * cases score 0 with an explanation, so one bad vignette does not stop a run. The one exception:
 * an answer a scorer cannot score within its budget (a regex that would backtrack for hours on
 * it) throws {@link UnscorableAnswerException}, and is stored unscored with the reason.
 *
 * <p>Model-graded scoring ("judge") is not a {@code Scorer}; see {@link JudgeRubric}.
 */
public interface Scorer {
    /**
     * The text that recreates this scorer through {@link Scorers#parse(String)}, such as
     * {@code "numeric:0.01"}.
     */
    String spec();

    /**
     * Grades one answer.
     *
     * @param answer   the model's text; never null, may be empty
     * @param expected the reference answer; never null and not empty (callers skip vignettes
     *                 without one)
     * @return the grade, never null
     * @throws NullPointerException when answer or expected is null
     * @throws UnscorableAnswerException when this answer cannot be scored within the scorer's budget
     */
    Score score(String answer, String expected);
}
