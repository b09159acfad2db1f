package dev.panoptes.control.store;

import dev.panoptes.control.JobId;

import java.time.Instant;

/**
 * A job that failed for good.
 *
 * @param jobId    the job
 * @param reason   why, as the last attempt reported it
 * @param attempts how many times it was dispatched
 * @param failedAt when the failure was recorded
 * @param runId    the job's run, or null when the store does not know it
 * @param model    the model the job asked for, or null
 */
public record JobFailure(JobId jobId, String reason, int attempts, Instant failedAt, String runId, String model) {
    /** A failure whose run and model are unknown. */
    public JobFailure(JobId jobId, String reason, int attempts, Instant failedAt) {
        this(jobId, reason, attempts, failedAt, null, null);
    }
}
