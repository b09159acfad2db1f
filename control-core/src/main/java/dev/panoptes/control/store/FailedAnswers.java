package dev.panoptes.control.store;

import dev.panoptes.control.ResponseRecord;

import java.util.function.Supplier;

/**
 * The one rule for scoring a failed answer ({@link ResponseRecord#isFailed()}): it is never sent
 * to a scorer or to a judge model, and every scoring gives it score 0 with the explanation
 * {@code "failed answer: <error>"}, so that it enters accuracy as a wrong answer (a model that
 * cannot answer a prompt has not answered it right). A vignette without an expected answer is
 * unscored whatever its answer, failed or not. The store applies this at store time and in every
 * new scoring; nothing else scores failed answers.
 */
public final class FailedAnswers {
    /** The start of a failed answer's explanation. */
    public static final String EXPLANATION_PREFIX = "failed answer: ";

    private FailedAnswers() {
    }

    /**
     * The score of an answer in a scoring: for a failed answer to a vignette with an expected
     * answer, 0 under {@code scorer}; for any other answer, what {@code scoring} gives (not called
     * for a failed one).
     *
     * @param scorer   the spec the scoring names, for the failed answer's entry
     * @param expected the vignette's expected answer, or null
     */
    public static ScoreEntry score(ResponseRecord record, String scorer, String expected,
                                   Supplier<ScoreEntry> scoring) {
        if (!record.isFailed()) {
            return scoring.get();
        }
        if (expected == null || expected.isEmpty()) {
            return null;
        }
        return new ScoreEntry(scorer == null || scorer.isEmpty() ? "failed" : scorer, 0.0,
                EXPLANATION_PREFIX + record.error());
    }
}
