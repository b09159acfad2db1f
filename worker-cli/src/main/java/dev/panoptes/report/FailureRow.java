package dev.panoptes.report;

import java.util.Objects;

/**
 * A job the run gave up on: it has no sample, only a reason.
 *
 * @param runId    the run
 * @param jobId    the job that failed
 * @param model    the model it asked; null when unknown
 * @param reason   why it failed, as the coordinator recorded it
 * @param attempts how many times it was tried
 */
public record FailureRow(String runId, String jobId, String model, String reason, int attempts) {
    /** @throws NullPointerException when runId or jobId is null */
    public FailureRow {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(jobId, "jobId (runId=" + runId + ")");
    }
}
