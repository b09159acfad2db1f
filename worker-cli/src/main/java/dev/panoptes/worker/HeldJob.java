package dev.panoptes.worker;

import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A job assigned to this worker and not yet answered, as {@link HeldJobs} keeps it.
 *
 * <p><b>Threads.</b> The session's I/O thread alone reads and writes the fields. The runner's
 * threads only complete {@link #future} and hand the job back, unread, through
 * {@link FinishedJobs}.
 */
final class HeldJob {
    final JobId id;
    /** When the read that brought its {@code assign} happened. */
    final long startNanos;
    /** The job's future from the runner; null until started. */
    CompletableFuture<JobOutcome> future;
    /** True once the coordinator's {@code cancel} stopped it: its answer says so. */
    boolean cancelledByCoordinator;
    /** The same id assigned earlier and still running (a coordinator repeating itself). */
    HeldJob earlier;

    HeldJob(JobId id, long startNanos) {
        this.id = id;
        this.startNanos = startNanos;
    }

    /** How long it has been held, for the log line of its answer. */
    long elapsedMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** Unlinks {@code job} from the chain of earlier jobs under this one's id. @return false when it is not there */
    boolean removeEarlier(HeldJob job) {
        for (HeldJob h = this; h.earlier != null; h = h.earlier) {
            if (h.earlier == job) {
                h.earlier = job.earlier;
                return true;
            }
        }
        return false;
    }
}
