package dev.panoptes.control.cache;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.RequestKey;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.AnswerCache;
import dev.panoptes.control.store.CachedAnswer;
import dev.panoptes.control.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Serves a run's requests from the answers its database already holds, before the run's jobs go
 * to the scheduler ({@link #serve}). For each job its {@link CachePolicy} applies to, the vignettes
 * not stored yet are looked up by {@link RequestKey}; the answers found are stored as this run's
 * records, marked cached, by {@link AnswerCache#store} (the same idempotent write as a worker's
 * answer), and the job goes on with the vignettes left:
 * <ul>
 *   <li>none left: the job is complete, and the scheduler skips it as it skips a job answered
 *       before a resume; it is never dispatched;</li>
 *   <li>some left: the scheduler gets the job under its own id holding only those vignettes, so
 *       that their answers are stored beside the cached ones, each once;</li>
 *   <li>none found: the job is unchanged.</li>
 * </ul>
 * Interrupted and run again, it finds the answers it stored as stored and serves the rest again,
 * so every answer is stored once however the run is cut.
 *
 * <p>A store that cannot be read or written here costs the cache, not the run: the run goes on
 * with every job as it was (answers already stored are then duplicates, ignored).
 *
 * <p>Runs on the caller's thread (the coordinator's, before {@code Scheduler.run}); not thread-safe.
 */
public final class ResponseCache {
    private static final Logger log = LoggerFactory.getLogger(ResponseCache.class);

    private final AnswerCache store;
    private final CachePolicy policy;
    private final Clock clock;

    /**
     * @param store  the database's answers ({@link dev.panoptes.control.store.JdbcResultStore#answerCache()})
     * @param policy which jobs are served, and how old an answer may be
     * @param clock  the time an answer's age is measured at
     */
    public ResponseCache(AnswerCache store, CachePolicy policy, Clock clock) {
        this.store = store;
        this.policy = policy;
        this.clock = clock;
    }

    /**
     * Serves what the database holds for {@code jobs} (the jobs of one run, as planned) and says
     * what is left to ask.
     *
     * @return the jobs to give the scheduler, with what was served
     * @throws InterruptedException when the thread is interrupted (what was stored stays stored)
     */
    public CachePlan serve(List<Job> jobs) throws InterruptedException {
        List<Job> cacheable = new ArrayList<>();
        for (Job job : jobs) {
            if (policy.appliesTo(job) && job.runId() != null) {
                cacheable.add(job);
            }
        }
        if (cacheable.isEmpty()) {
            return CachePlan.unchanged(jobs);
        }
        try {
            return serve(jobs, cacheable);
        } catch (StoreException e) {
            log.warn("the response cache is skipped for this run: {}", e.getMessage());
            log.debug("the response cache failed", e);
            return CachePlan.unchanged(jobs).failed(e.getMessage());
        }
    }

    private CachePlan serve(List<Job> jobs, List<Job> cacheable) throws InterruptedException {
        Map<String, Map<String, Set<String>>> storedByRun = new HashMap<>();
        // Per cacheable job that is not complete: its vignettes not stored yet, each with its key.
        Map<JobId, Map<Vignette, String>> open = new LinkedHashMap<>();
        List<String> keys = new ArrayList<>();
        for (Job job : cacheable) {
            Set<String> stored = storedByRun.computeIfAbsent(job.runId(), store::storedVignettes)
                    .getOrDefault(job.id().value(), Set.of());
            Map<Vignette, String> missing = new LinkedHashMap<>();
            for (Vignette v : job.spec().vignettes()) {
                if (stored.contains(v.id())) {
                    continue;
                }
                // A sandboxed sample is never served from the cache (no key: it is asked): its
                // check's verdict and transcript come from its own run in a sandbox.
                String key = v.usesSandbox() ? null : RequestKey.of(job, v);
                missing.put(v, key);
                if (key != null) {
                    keys.add(key);
                }
            }
            if (!missing.isEmpty()) {
                open.put(job.id(), missing);
            }
        }
        Map<String, CachedAnswer> found = keys.isEmpty() ? Map.of()
                : store.lookUp(keys, policy.notBefore(clock.instant()));
        List<Job> toRun = new ArrayList<>(jobs.size());
        Set<JobId> reduced = new HashSet<>();
        Set<String> sources = new HashSet<>();
        long served = 0;
        for (Job job : jobs) {
            Map<Vignette, String> missing = open.get(job.id());
            if (missing == null) {
                toRun.add(job);
                continue;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while serving answers from the response cache");
            }
            Map<String, CachedAnswer> hits = new LinkedHashMap<>();
            List<Vignette> left = new ArrayList<>(missing.size());
            missing.forEach((v, key) -> {
                CachedAnswer answer = key == null ? null : found.get(key);
                if (answer == null) {
                    left.add(v);
                } else {
                    hits.put(v.id(), answer);
                }
            });
            if (!hits.isEmpty()) {
                served += store.store(job, hits).stored();
                hits.values().forEach(a -> sources.add(a.runId()));
            }
            if (left.isEmpty() || left.size() == job.size()) {
                toRun.add(job);
            } else {
                toRun.add(new Job(job.id(), new EvalSpec(job.spec().name(), left, job.spec().params()), job.runId(),
                        job.epoch()));
                reduced.add(job.id());
            }
        }
        return new CachePlan(toRun, reduced, served, sources.size(), keys.size(), null);
    }
}
