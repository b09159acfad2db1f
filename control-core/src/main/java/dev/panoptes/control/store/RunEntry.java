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
 * @param startedAt  when this run was first started (a resumed run keeps its first start; its
 *                   sittings say when it was started again)
 * @param manifest   everything that decides the run's answers; null for a legacy run, noted by
 *                   a Panoptes before schema version 3, which kept none
 * @param finishedAt when the run (last) ended with its summary; null while it runs, or when it
 *                   stopped before its summary, or for a legacy run
 * @param sittings   each time a coordinator worked on the run, first first; empty for a run
 *                   noted before sittings were kept
 */
public record RunEntry(String runId, String suite, List<String> models, String scorer, int epochs, int vignettes,
                       Instant startedAt, RunManifest manifest, Instant finishedAt, List<RunSitting> sittings) {
    public RunEntry {
        models = List.copyOf(models);
        sittings = sittings == null ? List.of() : List.copyOf(sittings);
    }

    /** An entry without sittings (as given to {@link JdbcResultStore#recordRun}, which adds one). */
    public RunEntry(String runId, String suite, List<String> models, String scorer, int epochs, int vignettes,
                    Instant startedAt, RunManifest manifest, Instant finishedAt) {
        this(runId, suite, models, scorer, epochs, vignettes, startedAt, manifest, finishedAt, List.of());
    }

    /** When a coordinator last started the run: its last sitting's start, else its first start. */
    public Instant lastStartedAt() {
        return sittings.isEmpty() ? startedAt : sittings.get(sittings.size() - 1).startedAt();
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
