package dev.panoptes.control.store;

import dev.panoptes.control.suite.RunManifest;

import java.time.Instant;
import java.util.List;

/**
 * What a run was asked to do, as the coordinator started it; the report and the export name
 * the run with it.
 *
 * @param runId      the run's id
 * @param suite      the suite file, as the user named it
 * @param models     the models asked, in order; empty when the run named none
 * @param scorer     the scorer spec the run was (last) started with
 * @param epochs     times each vignette is asked
 * @param vignettes  vignettes in the suite
 * @param startedAt  when this run was (last) started
 * @param manifest   everything that decides the run's answers; null for a legacy run, noted by
 *                   a Panoptes before schema version 3, which kept none
 * @param finishedAt when the run (last) ended with its summary; null while it runs, or when it
 *                   stopped before its summary, or for a legacy run
 */
public record RunEntry(String runId, String suite, List<String> models, String scorer, int epochs, int vignettes,
                       Instant startedAt, RunManifest manifest, Instant finishedAt) {
    public RunEntry {
        models = List.copyOf(models);
    }

    /** An entry without a manifest (a legacy run), not finished. */
    public RunEntry(String runId, String suite, List<String> models, String scorer, int epochs, int vignettes,
                    Instant startedAt) {
        this(runId, suite, models, scorer, epochs, vignettes, startedAt, null, null);
    }

    /** The entry of a run started now from its manifest, under the run's id; not finished. */
    public static RunEntry of(RunManifest manifest, String scorer, Instant startedAt) {
        return new RunEntry(manifest.runId(), manifest.suite(), manifest.models(), scorer, manifest.epochs(),
                manifest.vignettes(), startedAt, manifest, null);
    }

    /** True for a run noted before manifests were kept (schema version 2 or older): it has none. */
    public boolean legacy() {
        return manifest == null;
    }
}
