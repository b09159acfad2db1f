package dev.panoptes.worker;

import dev.panoptes.control.JobId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The jobs a session holds: assigned by the coordinator and not yet answered, by id. A coordinator
 * that repeats an id it has outstanding gets both jobs run and both answered (it ignores one), so
 * an id may hold a chain of jobs ({@link HeldJob#earlier}).
 *
 * <p><b>Threads.</b> The session's I/O thread alone adds, looks up and releases jobs; only
 * {@link #count()} may be read from any thread (a moment's view). {@link #abandonAll()} runs on
 * the I/O thread, or on a thread closing a session that never served (when there is nothing to
 * hold).
 */
final class HeldJobs {
    private final Map<JobId, HeldJob> byId = new HashMap<>();
    /** Jobs held under an id that another held job has too. */
    private int stacked;
    private volatile int count;

    /** Holds a newly assigned job, stacked on any job still held under its id. */
    HeldJob add(JobId id, long startNanos) {
        HeldJob job = new HeldJob(id, startNanos);
        HeldJob earlier = byId.put(id, job);
        if (earlier != null) {
            job.earlier = earlier;
            stacked++;
        }
        count = byId.size() + stacked;
        return job;
    }

    /** The latest job held under {@code id}, or null. */
    HeldJob get(JobId id) {
        return byId.get(id);
    }

    /** Forgets a finished job. @return false when it was not held any more (abandoned) */
    boolean release(HeldJob job) {
        HeldJob current = byId.get(job.id);
        boolean found;
        if (current == job) {
            if (job.earlier != null) {
                byId.put(job.id, job.earlier);
                stacked--;
            } else {
                byId.remove(job.id);
            }
            found = true;
        } else if (current != null && current.removeEarlier(job)) {
            stacked--;
            found = true;
        } else {
            found = false;
        }
        count = byId.size() + stacked;
        return found;
    }

    /** How many ids are held (a repeated id counts once): the slots the coordinator sees busy. */
    int ids() {
        return byId.size();
    }

    boolean isEmpty() {
        return byId.isEmpty();
    }

    /** How many jobs are held, repeats included. Any thread. */
    int count() {
        return count;
    }

    /**
     * Forgets every job and cancels its future to stop the work, since nobody will read its
     * answer. @return the ids forgotten, one per job
     */
    List<JobId> abandonAll() {
        List<JobId> dropped = new ArrayList<>();
        for (HeldJob h : byId.values()) {
            for (HeldJob j = h; j != null; j = j.earlier) {
                dropped.add(j.id);
                if (j.future != null) {
                    j.future.cancel(true);
                }
            }
        }
        byId.clear();
        stacked = 0;
        count = 0;
        return dropped;
    }
}
