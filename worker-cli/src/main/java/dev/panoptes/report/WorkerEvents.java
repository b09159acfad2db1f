package dev.panoptes.report;

import java.util.Objects;

/**
 * How often a worker failed jobs and was quarantined during a run.
 *
 * @param runId       the run
 * @param workerId    the worker
 * @param failures    job attempts that failed on this worker
 * @param quarantines times the coordinator quarantined it
 */
public record WorkerEvents(String runId, String workerId, long failures, long quarantines) {
    /** @throws NullPointerException when runId or workerId is null */
    public WorkerEvents {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(workerId, "workerId (runId=" + runId + ")");
    }
}
