package dev.panoptes.report;

import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.suite.RunManifest;

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
 * @param startedAt  when the run (last) started; null when unknown
 * @param vignettes  how many vignettes the suite holds
 * @param manifest   everything that decides the run's answers (parameters, hashes, tool version);
 *                   null for a legacy run (noted before manifests were kept) or an unnoted one
 * @param finishedAt when the run (last) ended with its summary; null when unknown or unfinished
 * @param scoring    the scoring whose scores the samples carry; null when the run has none
 * @param scorings   every scoring of the run, oldest first
 */
public record RunInfo(String runId, String suite, List<String> models, String scorer, int epochs,
                      Instant startedAt, int vignettes, RunManifest manifest, Instant finishedAt, Scoring scoring,
                      List<Scoring> scorings) {
    /** @throws NullPointerException when runId or models is null */
    public RunInfo {
        Objects.requireNonNull(runId, "runId");
        models = List.copyOf(Objects.requireNonNull(models, "models (runId=" + runId + ")"));
        scorings = scorings == null ? List.of() : List.copyOf(scorings);
    }

    /** A header without manifest, end time or scorings. */
    public RunInfo(String runId, String suite, List<String> models, String scorer, int epochs, Instant startedAt,
                   int vignettes) {
        this(runId, suite, models, scorer, epochs, startedAt, vignettes, null, null, null, List.of());
    }
}
