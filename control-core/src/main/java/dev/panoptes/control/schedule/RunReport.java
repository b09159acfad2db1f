package dev.panoptes.control.schedule;

import dev.panoptes.control.JobId;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What a {@link Scheduler} run did.
 *
 * @param totalJobs          jobs given to the run
 * @param skipped            jobs already complete in the store, not sent again
 * @param completed          jobs answered and stored in this run
 * @param failed             jobs that failed for good, with their reasons
 * @param attempts           dispatches made, first attempts and redeliveries together
 * @param redeliveries       dispatches that repeated a job after a retryable failure
 * @param duplicates         records the store ignored because it had them already
 * @param completedByWorker  jobs completed per worker id
 * @param elapsed            wall-clock time of the run
 */
public record RunReport(int totalJobs, int skipped, int completed, List<FailedJob> failed, long attempts,
                        long redeliveries, long duplicates, Map<String, Integer> completedByWorker,
                        Duration elapsed) {
    public RunReport {
        failed = List.copyOf(failed);
        completedByWorker = Map.copyOf(completedByWorker);
    }

    /** True when every job is complete: completed in this run or skipped as already complete. */
    public boolean allCompleted() {
        return failed.isEmpty() && completed + skipped == totalJobs;
    }

    /**
     * A job that failed for good.
     *
     * @param jobId    the job
     * @param reason   the last failure's message
     * @param attempts dispatches made
     */
    public record FailedJob(JobId jobId, String reason, int attempts) {
    }
}
