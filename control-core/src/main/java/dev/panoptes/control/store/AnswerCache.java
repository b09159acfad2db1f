package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.store.ResultStore.Receipt;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The store's side of the response cache ({@link JdbcResultStore#answerCache()}): finding, by
 * request key ({@link dev.panoptes.control.RequestKey}), an answer a model already gave in any run
 * of the database, and storing it as the answer of another run's vignette, marked as served from
 * the cache ({@link StoredRecord#cachedFrom()}).
 *
 * <p>A cached answer is stored exactly as a worker's answer is, by the same idempotent write (job
 * id + vignette id, one transaction per job, scored into the run's current scoring): a vignette
 * stored once, from a worker or from the cache, is never stored again, so a run interrupted and
 * resumed stores each answer once whatever the mix.
 *
 * <p>Only a model's own answers are found: never a failed answer, never a cached copy (so that
 * an answer's age, which decides whether it has expired, is the age of the model's answer, and
 * a copy never outlives the answer it copies), never a record stored before request keys were
 * kept (schema version 4).
 *
 * <p>Threads: as its store; each call is one operation under the store's lock.
 */
public final class AnswerCache {
    /** The worker id of a record served from the cache: no worker produced it. */
    public static final String WORKER_ID = "(cache)";

    private final JdbcResultStore store;

    AnswerCache(JdbcResultStore store) {
        this.store = store;
    }

    /**
     * For each key that has one, the newest successful answer a model gave for it, stored at or
     * after {@code notBefore}. On SQLite the answers stored since the last keying (a sitting that
     * never ended, killed say) are keyed first, in a transaction of their own
     * ({@link RequestKeyIndex}): every answer stored before the call is found.
     *
     * @throws StoreException when the store cannot read, or on SQLite cannot key the answers (a
     *                        retry may mend either)
     */
    public Map<String, CachedAnswer> lookUp(Collection<String> requestKeys, Instant notBefore) {
        List<String> keys = new ArrayList<>(new LinkedHashSet<>(requestKeys));
        keys.remove(null);
        Map<String, CachedAnswer> found = new HashMap<>();
        if (keys.isEmpty()) {
            return found;
        }
        store.keyAnswers();
        for (int from = 0; from < keys.size(); from += CacheRows.KEYS_PER_QUERY) {
            List<String> batch = keys.subList(from, Math.min(keys.size(), from + CacheRows.KEYS_PER_QUERY));
            store.read("cached answers", c -> {
                CacheRows.newest(c, store.requestKeys(), batch, notBefore.toEpochMilli(), found);
                return null;
            });
        }
        return found;
    }

    /**
     * Stores cached answers as the records of some of a job's vignettes, each marked with the run
     * it copies, in one transaction; a vignette already stored is a duplicate and is left as it is.
     *
     * @param job        the job whose vignettes they answer
     * @param byVignette the answer for each vignette id served; not empty
     * @return how many records were stored and how many were there already
     * @throws StoreException when the store cannot write now (repeating is safe)
     */
    public Receipt store(Job job, Map<String, CachedAnswer> byVignette) {
        List<ResponseRecord> records = new ArrayList<>(byVignette.size());
        Map<String, String> sources = new HashMap<>();
        byVignette.forEach((vignetteId, answer) -> {
            records.add(answer.asAnswerTo(vignetteId));
            sources.put(vignetteId, answer.runId());
        });
        return store.store(job, new JobOutcome(job.id(), records), WORKER_ID, sources);
    }

    /**
     * The vignette ids stored for each job of a run, by job id (in one pass), whether a model or
     * the cache answered them.
     *
     * @throws StoreException when the store cannot read
     */
    public Map<String, Set<String>> storedVignettes(String runId) {
        return store.read("the records of run " + runId, c -> CacheRows.storedByJob(c, runId));
    }
}
