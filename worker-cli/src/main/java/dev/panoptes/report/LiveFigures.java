package dev.panoptes.report;

import dev.panoptes.control.Job;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.StoredAnswers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * A run's figures counted as its answers are stored ({@link JdbcResultStore#onStored}), so that the
 * coordinator's summary need not read a million answers back from the store at the end of a run:
 * the same {@link RunTally}, given for each stored answer the row {@link RunDataLoader#stats} would
 * read back ({@link RunDataLoader#figuresRow}), in the order of storing.
 *
 * <p>The figures are given only when they are certainly the store's ({@link #figures}): every
 * record the store holds for the run was counted here (so none came from an earlier sitting or
 * another writer) and every outcome told of was stored whole (an outcome with duplicates does not
 * say which of its rows were new). Otherwise {@link #figures} answers null and the caller reads the
 * answers back, as before. Scores changed after storing (a judge's grades) are not seen here: a
 * caller whose run was graded must not ask.
 *
 * <p>What it keeps is the tally's: per model and vignette a few numbers in arrays made at the
 * model's first answer, nothing per answer, so the heap does not grow as answers are stored. Thread-safe:
 * the storing threads count, then one thread asks for the figures.
 */
public final class LiveFigures implements StoredAnswers {
    private static final Logger log = LoggerFactory.getLogger(LiveFigures.class);

    private final String runId;
    private final String groupBy;
    private final RunTally tally;
    private final Consumer<SampleRow> also;
    private final Set<String> scorers = new TreeSet<>();
    private long counted;
    /** Why the counts are not the store's, or null while they are. */
    private String unusable;

    /**
     * @param runId   the run whose answers are counted
     * @param groupBy the group-by key given to the summary (null or blank: the run's own), which
     *                must resolve to the key the figures are asked with
     * @param vignettes how many vignettes each model is to answer (the suite's): room for their
     *                figures is made at a model's first answer, so that counting allocates
     *                nothing more ({@link RunTally#RunTally(String, int)}); 0 when not known
     * @param also    given each answer too, after the figures count it (as {@link RunDataLoader#stats}'s)
     */
    public LiveFigures(String runId, String groupBy, int vignettes, Consumer<SampleRow> also) {
        this.runId = java.util.Objects.requireNonNull(runId, "runId");
        this.groupBy = groupBy;
        this.tally = new RunTally(groupBy, vignettes);
        this.also = java.util.Objects.requireNonNull(also, "also");
    }

    @Override
    public synchronized void stored(Job job, List<ResponseRecord> rows, Vignette[] vignettes, ScoreEntry[] scores,
                                    Map<String, String> cachedFrom, ResultStore.Receipt receipt) {
        if (unusable != null) {
            return;
        }
        if (job == null || !runId.equals(job.runId())) {
            unusable = "an answer of another run was stored (job " + (job == null ? "none" : job.id()) + ")";
            return;
        }
        if (receipt.duplicates() > 0 || receipt.stored() != rows.size()) {
            unusable = "job " + job.id() + " was stored with " + receipt.duplicates() + " duplicate(s)";
            return;
        }
        boolean metadata = tally.groupBy() != null;
        for (int i = 0; i < rows.size(); i++) {
            ResponseRecord r = rows.get(i);
            ScoreEntry score = scores == null ? null : scores[i];
            SampleRow row = RunDataLoader.figuresRow(runId, job, r, vignettes[i], score,
                    cachedFrom.isEmpty() ? null : cachedFrom.get(r.vignetteId()), metadata);
            tally.add(row);
            also.accept(row);
            if (score != null && score.score() != null && score.scorer() != null) {
                scorers.add(score.scorer());
            }
            counted++;
        }
    }

    /** The answers counted so far. */
    public synchronized long counted() {
        return counted;
    }

    /**
     * The run's figures in scoring {@code scoringNumber} (the one its answers were stored into), as
     * {@link RunDataLoader#stats} would read them back, or null when the counts here may not be the
     * store's (then read them back; the reason is logged at debug level).
     *
     * @throws dev.panoptes.control.store.StoreException when the store cannot be read
     */
    public synchronized RunStats figures(JdbcResultStore store, int scoringNumber) {
        if (unusable == null) {
            // All the store's records first: SQLite counts them without reading a row, and when
            // they are all counted here so are the run's; the run's alone reads every row.
            long held = store.recordCount();
            if (held != counted) {
                held = store.recordCount(runId);
            }
            if (held != counted) {
                unusable = "the store holds " + held + " answers of the run, " + counted + " were stored now";
            }
        }
        RunStats stats = unusable != null ? null
                : RunDataLoader.stats(store, runId, scoringNumber, groupBy, tally, scorers);
        if (stats == null) {
            log.debug("the summary reads the answers back: {}", unusable == null ? "another group-by key" : unusable);
        }
        return stats;
    }
}
