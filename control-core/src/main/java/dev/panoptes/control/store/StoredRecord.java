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
 * @param score      how it was scored, or null when it was not
 * @param cachedFrom for an answer served from the response cache (no model was called), the run
 *                   whose stored answer it copies; null for an answer a model gave
 */
public record StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt,
                           RecordContext context, ScoreEntry score, String cachedFrom) {
    public StoredRecord {
        context = context == null ? RecordContext.NONE : context;
    }

    /** A record a model gave (not served from the cache). */
    public StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt,
                        RecordContext context, ScoreEntry score) {
        this(jobId, record, workerId, storedAt, context, score, null);
    }

    /** True when this answer was served from the response cache (see {@link #cachedFrom()}). */
    public boolean cached() {
        return cachedFrom != null;
    }

    /** A record without context or score. */
    public StoredRecord(JobId jobId, ResponseRecord record, String workerId, Instant storedAt) {
        this(jobId, record, workerId, storedAt, RecordContext.NONE, null);
    }
}
