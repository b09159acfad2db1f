package dev.panoptes.control.cache;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Plural;
import dev.panoptes.control.store.ResultStore;

import java.util.List;
import java.util.Set;

/**
 * What {@link ResponseCache#serve} left for the scheduler: the jobs to run (some holding only the
 * vignettes the cache had no answer for) and what it served.
 *
 * <p>Give the scheduler {@link #jobs()} with the store {@link #storeFor} returns: a job cut down
 * to its unanswered vignettes shares its id with answers the cache stored, so a store that judges
 * a job complete by how many records its id has would take it for done; the wrapper answers that
 * such a job is not complete, which is true by construction (none of its vignettes was stored when
 * it was cut, and the run's lock keeps other writers out).
 *
 * <p>Immutable; any thread.
 *
 * @param jobs      the jobs to give the scheduler, in the order given
 * @param reduced   the jobs holding fewer vignettes than planned
 * @param served    answers stored from the cache now
 * @param fromRuns  the distinct runs those answers come from
 * @param looked    vignettes looked up (not stored yet, in jobs the cache applies to)
 * @param failure   why the cache could not be used (the store failed), or null
 */
public record CachePlan(List<Job> jobs, Set<JobId> reduced, long served, int fromRuns, long looked,
                        String failure) {
    public CachePlan {
        jobs = List.copyOf(jobs);
        reduced = Set.copyOf(reduced);
    }

    /** The jobs as they were: nothing served. */
    static CachePlan unchanged(List<Job> jobs) {
        return new CachePlan(jobs, Set.of(), 0, 0, 0, null);
    }

    /** This plan, noting why the cache was skipped. */
    CachePlan failed(String why) {
        return new CachePlan(jobs, reduced, served, fromRuns, looked, why);
    }

    /** The store to give the scheduler with {@link #jobs()}: {@code store} itself when no job was cut. */
    public ResultStore storeFor(ResultStore store) {
        return reduced.isEmpty() ? store : new ReducedJobsStore(store, reduced);
    }

    /** One line for the console: what was served, or why nothing was. */
    public String describe() {
        if (failure != null) {
            return "response cache: not used (" + failure + "); every vignette is asked of its model";
        }
        if (looked == 0) {
            return "response cache: nothing to look up (every answer is stored already)";
        }
        if (served == 0) {
            return "response cache: none of the " + Plural.of(looked, "request") + " was answered before;"
                    + " all go to the models";
        }
        return "response cache: " + Plural.of(served, "answer") + " served from the database ("
                + Plural.of(fromRuns, "source run") + ") without a model call; " + (looked - served) + " of " + looked + " left to ask";
    }
}
