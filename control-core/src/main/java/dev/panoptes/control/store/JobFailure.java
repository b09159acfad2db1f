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
 */
public record JobFailure(JobId jobId, String reason, int attempts, Instant failedAt) {
}
