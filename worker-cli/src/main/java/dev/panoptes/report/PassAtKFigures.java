package dev.panoptes.report;

import dev.panoptes.control.stats.Estimate;

import java.util.Map;

/**
 * pass@k of each model of a run that asked its vignettes more than once (epochs): per vignette,
 * how many of its answers passed (score 1; a failed answer does not pass) of how many were scored,
 * then {@link dev.panoptes.control.stats.PassAtK} over the vignettes, for k = 1, 5, 10 and the number of epochs, each at most
 * the epochs. Only for runs whose every score is 0 or 1: a partial score has no "passed".
 * Computed by {@link RunTally} from per-vignette counts. Immutable.
 *
 * @param byModel per model, in the run's order: k to its estimate, k ascending; empty when pass@k
 *                does not apply
 */
public record PassAtKFigures(Map<String, Map<Integer, Estimate>> byModel) {
    /** True when there is nothing to show. */
    public boolean isEmpty() {
        return byModel.isEmpty();
    }
}
