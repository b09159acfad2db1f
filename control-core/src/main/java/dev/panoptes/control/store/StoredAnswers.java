package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;

import java.util.List;
import java.util.Map;

/**
 * Told of each outcome a {@link JdbcResultStore} committed ({@link JdbcResultStore#onStored}), with
 * what it stored for each answer, so that a caller can count what is stored as it is stored instead
 * of reading it back (the coordinator's summary: {@code LiveFigures}).
 *
 * <p>Called on the thread that stored (the scheduler's store writer, or the response cache's), under
 * the store's lock, after the commit, once per outcome a store call committed, in the order of
 * storing: a listener must be quick and must not call the store. What it throws is logged and
 * otherwise ignored: the answers are stored whatever it does. An outcome stored with duplicates
 * ({@code receipt.duplicates() > 0}) does not say which of its rows were new.
 */
@FunctionalInterface
public interface StoredAnswers {
    /**
     * One outcome committed.
     *
     * @param job        the job it answers, or null when stored without one
     * @param rows       its records in key order (not to be changed)
     * @param vignettes  the vignette of each row, null where unknown (not to be changed)
     * @param scores     the score stored with each row in the run's current scoring, null where none
     *                   was; null when no row was scored (not to be changed)
     * @param cachedFrom per vignette id, the run whose answer a row copies (served from the cache);
     *                   empty for answers a model gave
     * @param receipt    how many of the rows were stored and how many were duplicates
     */
    void stored(Job job, List<ResponseRecord> rows, Vignette[] vignettes, ScoreEntry[] scores,
                Map<String, String> cachedFrom, ResultStore.Receipt receipt);
}
