package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Supplier;

/**
 * How a store scores answers as it stores them: before the transaction that stores them (so a
 * slow scorer holds no database lock), and each answer on its own, so that whatever a scorer does
 * is that answer's own affair. A scorer that throws anything (a bug, a number it cannot read, a
 * {@link StackOverflowError} of a regex on a long answer) leaves its answer stored and unscored: a
 * score entry with no score and the reason, starting {@value #NOT_SCORED}, which every figure
 * counts as unscored and a judge never grades; the answers around it are scored, and the write is
 * not failed. Only a failure of the virtual machine itself ({@link OutOfMemoryError},
 * {@link InternalError}: any {@link VirtualMachineError} but a stack overflow) propagates, as it
 * leaves nothing trustworthy to go on with.
 *
 * <p>Stateless; any thread.
 */
final class StoreScoring {
    private static final Logger log = LoggerFactory.getLogger(JdbcResultStore.class);
    /** The start of the explanation of an answer that could not be scored. */
    static final String NOT_SCORED = "not scored: ";

    private StoreScoring() {
    }

    /**
     * The score of each answer to a vignette of its job that is scored (failed answers by
     * {@link FailedAnswers}' rule, the others by {@code scorer}), in the order of {@code rows},
     * null where an answer is not scored; a vignette given twice is scored at its first answer
     * only. Null (nothing scored) without a job or a scorer.
     *
     * @param rows      an outcome's records in key order ({@link OutcomeRows#inKeyOrder}), so
     *                  that the answers of one vignette are next to each other
     * @param vignettes the vignette of each row, null where it has none ({@link OutcomeRows#vignettesOf})
     */
    static ScoreEntry[] scoresOf(Job job, List<ResponseRecord> rows, Vignette[] vignettes, RecordScoring scorer) {
        if (job == null || scorer == RecordScoring.NONE) {
            return null;
        }
        ScoreEntry[] scores = new ScoreEntry[rows.size()];
        for (int i = 0; i < scores.length; i++) {
            ResponseRecord r = rows.get(i);
            Vignette v = vignettes[i];
            if (v == null || i > 0 && rows.get(i - 1).vignetteId().equals(r.vignetteId())) {
                continue;
            }
            String spec = v.scorer() != null ? v.scorer() : scorer.spec();
            scores[i] = FailedAnswers.score(r, spec, v.expected(),
                    () -> guarded(spec, () -> "job " + job.id() + ", vignette " + r.vignetteId(), () -> scorer.score(v, r)));
        }
        return scores;
    }

    /**
     * What {@code scoring} gives, or, when it throws, an unscored entry under {@code spec} with
     * the reason.
     *
     * @param what the answer, for the log (made only when the scorer fails)
     * @throws VirtualMachineError when the virtual machine fails (but not for a stack overflow)
     */
    static ScoreEntry guarded(String spec, Supplier<String> what, Supplier<ScoreEntry> scoring) {
        try {
            return scoring.get();
        } catch (Throwable t) {
            if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
                throw (VirtualMachineError) t;
            }
            String reason = "the scorer failed: " + t;
            String answer = what.get();
            log.warn("scoring the answer of {} failed, so it is stored unscored: {}", answer, t.toString());
            log.debug("the scorer's failure on the answer of {}", answer, t);
            return new ScoreEntry(spec == null || spec.isEmpty() ? OutcomeWriter.UNNAMED_SCORER : spec, null,
                    NOT_SCORED + reason);
        }
    }
}
