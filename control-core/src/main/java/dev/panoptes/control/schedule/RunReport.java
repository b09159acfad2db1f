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
 * @param quarantined        workers quarantined during the run, by worker id
 */
public record RunReport(int totalJobs, int skipped, int completed, List<FailedJob> failed, long attempts,
                        long redeliveries, long duplicates, Map<String, Integer> completedByWorker,
                        Duration elapsed, List<Quarantined> quarantined) {
    public RunReport {
        failed = List.copyOf(failed);
        completedByWorker = Map.copyOf(completedByWorker);
        quarantined = List.copyOf(quarantined);
    }

    /** A report of a run in which no worker was quarantined. */
    public RunReport(int totalJobs, int skipped, int completed, List<FailedJob> failed, long attempts,
                     long redeliveries, long duplicates, Map<String, Integer> completedByWorker, Duration elapsed) {
        this(totalJobs, skipped, completed, failed, attempts, redeliveries, duplicates, completedByWorker, elapsed,
                List.of());
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

    /**
     * A worker that was quarantined: its own failures (not its jobs') kept it from new jobs for
     * a while.
     *
     * @param workerId   the worker
     * @param times      how many times in this run
     * @param lastReason the last failure charged to it
     */
    public record Quarantined(String workerId, int times, String lastReason) {
    }
}
