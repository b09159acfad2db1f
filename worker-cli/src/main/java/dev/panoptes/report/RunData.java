package dev.panoptes.report;

import dev.panoptes.control.store.Scoring;

import java.util.List;
import java.util.Objects;

/**
 * Everything stored about one run, as read from the result database: the input of
 * {@link RunStats} and of every report.
 *
 * <p>Immutable; the lists are copied (null becomes empty).
 *
 * @param info         the run's header
 * @param samples      every answer, in storage order
 * @param failures     the jobs that failed for good
 * @param workerEvents per-worker failure and quarantine counts
 */
public record RunData(RunInfo info, List<SampleRow> samples, List<FailureRow> failures,
                      List<WorkerEvents> workerEvents) {
    /** @throws NullPointerException when info is null or a list holds a null */
    public RunData {
        Objects.requireNonNull(info, "info");
        samples = samples == null ? List.of() : List.copyOf(samples);
        failures = failures == null ? List.of() : List.copyOf(failures);
        workerEvents = workerEvents == null ? List.of() : List.copyOf(workerEvents);
    }

    /** The scoring whose scores the samples carry ({@link RunInfo#scoring()}); null when the run has none. */
    public Scoring scoring() {
        return info.scoring();
    }
}
