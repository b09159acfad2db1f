package dev.panoptes.control.cache;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.ResultStore;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * A store as the scheduler sees it when some jobs were cut down to their unanswered vignettes (by
 * the response cache, or by {@code --retry-failed} to the vignettes whose failed answers it
 * removed): such a job is not complete (none of its vignettes was stored when it was cut), which
 * a count of its id's records, the others among them, would get wrong. Everything else goes to
 * the store as it is. Threads: as the store it wraps.
 */
public final class ReducedJobsStore extends ForwardingResultStore {
    private final Set<JobId> reduced;

    /**
     * @param delegate the store
     * @param reduced  the jobs cut down, each holding only vignettes none of which is stored
     */
    public ReducedJobsStore(ResultStore delegate, Set<JobId> reduced) {
        super(delegate);
        this.reduced = reduced;
    }

    @Override
    public boolean isComplete(Job job) {
        return !reduced.contains(job.id()) && super.isComplete(job);
    }

    @Override
    public Set<JobId> completedAmong(Collection<Job> jobs) {
        List<Job> whole = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            if (!reduced.contains(job.id())) {
                whole.add(job);
            }
        }
        return whole.isEmpty() ? Set.of() : super.completedAmong(whole);
    }

    /** Writes are the store's own: a batch is committed as it commits one. */
    @Override
    public void recordAll(List<Answer> answers, List<Written> done) {
        forwardRecordAll(answers, done);
    }

    /** The scheduler's view ends with the run; the store itself is its owner's to close. */
    @Override
    public void close() {
    }
}
