package dev.panoptes.control.store;

import java.time.Instant;
import java.util.List;

/**
 * What a run was asked to do, as the coordinator started it; the report and the export name
 * the run with it.
 *
 * @param runId     the run's id
 * @param suite     the suite file, as the user named it
 * @param models    the models asked, in order; empty when the run named none
 * @param scorer    the run's scorer spec
 * @param epochs    times each vignette is asked
 * @param vignettes vignettes in the suite
 * @param startedAt when this run was (last) started
 */
public record RunEntry(String runId, String suite, List<String> models, String scorer, int epochs, int vignettes,
                       Instant startedAt) {
    public RunEntry {
        models = List.copyOf(models);
    }
}
