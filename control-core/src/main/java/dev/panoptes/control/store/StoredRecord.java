package dev.panoptes.control.store;

import dev.panoptes.control.JobId;
import dev.panoptes.control.ResponseRecord;

import java.time.Instant;

/**
 * A record as the store keeps it.
 *
 * @param jobId    the job it answers
 * @param record   the model's answer to one vignette (with the model name the API reported)
 * @param workerId the worker that produced it
 * @param storedAt when it was stored
 * @param context  the run, model, epoch, prompt, expected answer and metadata; never null
 * @param score    how it was scored, or null when it was not
 */
public record StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt,
                           RecordContext context, ScoreEntry score) {
    public StoredRecord {
        context = context == null ? RecordContext.NONE : context;
    }

    /** A record without context or score. */
    public StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt) {
        this(jobId, record, workerId, storedAt, RecordContext.NONE, null);
    }
}
