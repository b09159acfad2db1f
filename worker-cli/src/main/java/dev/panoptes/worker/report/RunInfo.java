package dev.panoptes.worker.report;

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
 * @param scorer    the scorer's name; null when the run was not scored
 * @param epochs    how many times each vignette was asked of each model
 * @param startedAt when the run started; null when unknown
 * @param vignettes how many vignettes the suite holds
 */
public record RunInfo(String runId, String suite, List<String> models, String scorer, int epochs,
                      Instant startedAt, int vignettes) {
    /** @throws NullPointerException when runId or models is null */
    public RunInfo {
        Objects.requireNonNull(runId, "runId");
        models = List.copyOf(Objects.requireNonNull(models, "models (runId=" + runId + ")"));
    }
}
