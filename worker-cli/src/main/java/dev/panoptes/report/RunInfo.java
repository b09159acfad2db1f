package dev.panoptes.report;

import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.store.RunStop;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.UnstoredSpend;
import dev.panoptes.control.suite.RunManifest;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What a run was asked to do: the header of every report about it.
 *
 * <p>Immutable; {@code models} is copied.
 *
 * @param runId     the run's id
 * @param suite     the suite's name or path, as the run recorded it
 * @param models    the models the run asked, in the order reports list them
 * @param scorer     the scorer of the scoring shown (the run's, when it has no scoring); null when
 *                   the run was not scored
 * @param epochs     how many times each vignette was asked of each model
 * @param startedAt  when the run first started (a resumed run keeps its first start); null when unknown
 * @param vignettes  how many vignettes the suite holds
 * @param manifest   everything that decides the run's answers (parameters, hashes, tool version);
 *                   null for a legacy run (noted before manifests were kept) or an unnoted one
 * @param finishedAt when the run (last) ended with its summary; null when unknown or unfinished
 * @param scoring    the scoring whose scores the samples carry; null when the run has none
 * @param scorings   every scoring of the run, oldest first
 * @param sittings   each time a coordinator worked on the run, first first, each with what it spent
 *                   on answers never stored; empty when unknown
 */
public record RunInfo(String runId, String suite, List<String> models, String scorer, int epochs,
                      Instant startedAt, int vignettes, RunManifest manifest, Instant finishedAt, Scoring scoring,
                      List<Scoring> scorings, List<RunSitting> sittings) {
    /** @throws NullPointerException when runId or models is null */
    public RunInfo {
        Objects.requireNonNull(runId, "runId");
        models = List.copyOf(Objects.requireNonNull(models, "models (runId=" + runId + ")"));
        scorings = scorings == null ? List.of() : List.copyOf(scorings);
        sittings = sittings == null ? List.of() : List.copyOf(sittings);
    }

    /** A header without sittings. */
    public RunInfo(String runId, String suite, List<String> models, String scorer, int epochs,
                   Instant startedAt, int vignettes, RunManifest manifest, Instant finishedAt, Scoring scoring,
                   List<Scoring> scorings) {
        this(runId, suite, models, scorer, epochs, startedAt, vignettes, manifest, finishedAt, scoring, scorings,
                List.of());
    }

    /**
     * The time coordinators spent on the run: the sum of its sittings, or the span from start to
     * end when it has none noted; null when unknown (not started or not finished, without sittings).
     */
    public Duration workedFor() {
        if (!sittings.isEmpty()) {
            return RunSitting.total(sittings);
        }
        return startedAt == null || finishedAt == null ? null : Duration.between(startedAt, finishedAt);
    }

    /**
     * What stopped the run's last sitting (its cost budget, or a gate that failed it), or null
     * when nothing did: a later sitting that ends cleanly clears an earlier stop.
     */
    public RunStop stop() {
        return sittings.isEmpty() ? null : sittings.get(sittings.size() - 1).stop();
    }

    /**
     * What the run's sittings spent on model calls whose answers were never stored, added up per
     * model ({@link RunSitting#unstored}); empty when nothing was (or the run has no sittings).
     */
    public List<UnstoredSpend> notStored() {
        return RunSitting.unstored(sittings);
    }

    /**
     * From the first start to the end (the last sitting's end while unfinished); null when unknown.
     */
    public Duration wallSpan() {
        Instant end = finishedAt != null ? finishedAt
                : sittings.isEmpty() ? null : sittings.get(sittings.size() - 1).endedAt();
        return startedAt == null || end == null ? null : Duration.between(startedAt, end);
    }

    /** A header without manifest, end time or scorings. */
    public RunInfo(String runId, String suite, List<String> models, String scorer, int epochs, Instant startedAt,
                   int vignettes) {
        this(runId, suite, models, scorer, epochs, startedAt, vignettes, null, null, null, List.of());
    }
}
