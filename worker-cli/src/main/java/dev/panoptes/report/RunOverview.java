package dev.panoptes.report;

import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.store.RunStop;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One run in a list of the runs of a database: what it asked, when, how far it got and how each
 * model did. The counts and accuracies are {@link RunStats}' (so they are those the summary, the
 * exports and the report show); whether a coordinator is running it now is not the store's to
 * know, and is given to {@link #state(boolean)}.
 *
 * <p>Immutable ({@code models} and {@code accuracy} are copied); any thread.
 *
 * @param runId      the run's id
 * @param suite      the suite as the run recorded it; null for a run the database never noted
 * @param models     the models the run asked, then any other its answers name
 * @param startedAt  when the run (last) started; null when unknown
 * @param finishedAt when it (last) ended with its summary; null when unknown or unfinished
 * @param expected   answers the run asks for (vignettes x models x epochs); -1 when unknown
 * @param stored     answers stored, failed answers included
 * @param failedJobs jobs that failed for good
 * @param accuracy   per model, the mean score with its interval (n = 0 when none is scored)
 * @param stop       what stopped its last sitting (its budget, or a gate), or null
 */
public record RunOverview(String runId, String suite, List<String> models, Instant startedAt, Instant finishedAt,
                          long expected, long stored, int failedJobs, Map<String, Estimate> accuracy,
                          RunStop stop) {
    /** Where a run stands. */
    public enum State {
        /** Every answer it asks for is stored. */
        COMPLETE,
        /** Answers are missing (it stopped, or some of its jobs failed) and no coordinator runs it. */
        INCOMPLETE,
        /** A coordinator holds it now. */
        RUNNING;

        /** "complete", "incomplete", "running". */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @throws NullPointerException when runId, models or accuracy is null */
    public RunOverview {
        Objects.requireNonNull(runId, "runId");
        models = List.copyOf(models);
        accuracy = Collections.unmodifiableMap(new LinkedHashMap<>(accuracy));
    }

    /** The overview of a run as the store holds it. */
    public static RunOverview of(RunData data) {
        return of(RunStats.of(data, null));
    }

    /**
     * The overview of a run from its statistics (read from a list of its answers, or streamed
     * from the store: {@link RunDataLoader#stats}).
     */
    public static RunOverview of(RunStats stats) {
        RunInfo info = stats.info();
        Map<String, Estimate> accuracy = new LinkedHashMap<>();
        for (RunStats.ModelStats m : stats.models()) {
            accuracy.put(m.model(), m.accuracy());
        }
        long expected = info.suite() == null ? -1
                : (long) info.vignettes() * Math.max(1, info.models().size()) * info.epochs();
        return new RunOverview(info.runId(), info.suite(), stats.models().stream().map(RunStats.ModelStats::model)
                .toList(), info.startedAt(), info.finishedAt(), expected, stats.totalSamples(),
                stats.totalFailures(), accuracy, info.stop());
    }

    /**
     * Where the run stands: running when a coordinator holds it ({@code running}), else complete
     * when every answer it asks for is stored (for a run that never noted how many it asks for:
     * when it finished without a failed job), else incomplete.
     */
    public State state(boolean running) {
        if (running) {
            return State.RUNNING;
        }
        boolean complete = expected >= 0 ? stored >= expected && failedJobs == 0
                : finishedAt != null && failedJobs == 0;
        return complete ? State.COMPLETE : State.INCOMPLETE;
    }

    /**
     * The state as a list of runs shows it: {@link #state(boolean)}'s label, followed by what
     * stopped the last sitting when a budget or gate did ({@code incomplete (stopped by budget)},
     * {@code complete (failed a gate)}), so a run a CI gate stopped never reads as merely unfinished.
     */
    public String stateLabel(boolean running) {
        String label = state(running).label();
        if (running || stop == null) {
            return label;
        }
        return label + (RunStop.BUDGET.equals(stop.cause()) ? " (stopped by budget)" : " (failed a gate)");
    }
}
