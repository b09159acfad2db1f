package dev.panoptes.control.store;

import dev.panoptes.control.JobId;
import dev.panoptes.control.ResponseRecord;

import java.time.Instant;

/**
 * A record as the store keeps it.
 *
 * @param jobId    the job it answers
 * @param record   the model's answer to one vignette
 * @param workerId the worker that produced it
 * @param storedAt when it was stored
 */
public record StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt) {
}
