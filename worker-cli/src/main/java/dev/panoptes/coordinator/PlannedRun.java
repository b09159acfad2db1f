package dev.panoptes.coordinator;

import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;

import java.io.IOException;

/**
 * What a coordinator's settings ask, planned and nothing else: the suite as sent (few-shot turns in
 * front, only the subset's vignettes, in its order), the run's manifest and its jobs. A real run
 * and a dry run plan through here, so that a dry run shows the run the same command would do,
 * under the same id. Reads the suite and few-shot files; opens no store, binds nothing.
 *
 * @param suite    the suite as its jobs hold it
 * @param manifest the run's identity and description
 * @param plan     the run's jobs, under the manifest's id
 */
record PlannedRun(Suite suite, RunManifest manifest, JobPlan plan) {
    /**
     * @throws SuiteFormatException            when the suite or the few-shot file has problems
     * @throws SuiteSubset.UnknownIdsException when the subset names ids the suite lacks
     * @throws IOException                     when a file cannot be read
     */
    static PlannedRun of(CoordinatorSettings settings, SuiteSubset subset) throws IOException, SuiteFormatException {
        Suite suite = subset.apply(RunSuites.load(settings));
        RunManifest manifest = RunSuites.manifest(settings, suite, subset);
        return new PlannedRun(suite, manifest, JobPlan.of(suite, manifest));
    }
}
