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
 * @param scorers      the scorers that gave the samples' scores, the run's own first: it alone for
 *                     most runs, {@code check} where the vignettes declare a sandbox check, a
 *                     vignette's own scorer beside it; empty when unknown
 */
public record RunData(RunInfo info, List<SampleRow> samples, List<FailureRow> failures,
                      List<WorkerEvents> workerEvents, List<String> scorers) {
    /** @throws NullPointerException when info is null or a list holds a null */
    public RunData {
        Objects.requireNonNull(info, "info");
        samples = samples == null ? List.of() : List.copyOf(samples);
        failures = failures == null ? List.of() : List.copyOf(failures);
        workerEvents = workerEvents == null ? List.of() : List.copyOf(workerEvents);
        scorers = scorers == null ? List.of() : List.copyOf(scorers);
    }

    /** A run whose samples' scorers are not known (then the run's own scorer is taken for them). */
    public RunData(RunInfo info, List<SampleRow> samples, List<FailureRow> failures, List<WorkerEvents> workerEvents) {
        this(info, samples, failures, workerEvents, List.of());
    }

    /** The scoring whose scores the samples carry ({@link RunInfo#scoring()}); null when the run has none. */
    public Scoring scoring() {
        return info.scoring();
    }
}
