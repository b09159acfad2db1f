package dev.panoptes.control.store;

import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;

/**
 * Scores an answer as it is stored, so that a stored record carries its score from the start.
 * Called by the thread that stores (the scheduler's writer), just before the transaction that
 * stores the answer: it should be quick and must not call out (a model-graded score is stored
 * later, by {@link JdbcResultStore#recordGrade}). If it throws, whatever it throws short of the
 * virtual machine failing, the answer is stored unscored with the reason, and its neighbours are
 * stored and scored. It is never called for a failed answer (see {@link FailedAnswers}).
 */
@FunctionalInterface
public interface RecordScoring {
    /** Scores nothing. */
    RecordScoring NONE = (vignette, record) -> null;

    /**
     * @return the answer's score, or null when it is not scored (the vignette has no expected
     *         answer); a model-graded answer gets an entry with a null score, to be graded later
     */
    ScoreEntry score(Vignette vignette, ResponseRecord record);

    /**
     * The scorer spec a scoring made of this names (the run's scorer), or null for a scoring
     * that has none; the store names the run's first scoring with it.
     */
    default String spec() {
        return null;
    }
}
