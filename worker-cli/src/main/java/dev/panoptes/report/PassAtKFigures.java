package dev.panoptes.report;

import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.PassAtK;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * pass@k of each model of a run that asked its vignettes more than once (epochs): per vignette,
 * how many of its answers passed (score 1; a failed answer does not pass) of how many were scored,
 * then {@link PassAtK} over the vignettes, for k = 1, 5, 10 and the number of epochs, each at most
 * the epochs. Only for runs whose every score is 0 or 1: a partial score has no "passed".
 * Immutable.
 *
 * @param byModel per model, in the run's order: k to its estimate, k ascending; empty when pass@k
 *                does not apply
 */
public record PassAtKFigures(Map<String, Map<Integer, Estimate>> byModel) {
    /** The figures of a run, computed from its samples. */
    public static PassAtKFigures of(RunData data, List<String> models) {
        Map<String, Map<String, int[]>> counts = new LinkedHashMap<>();
        int epochs = 0;
        for (SampleRow s : data.samples()) {
            Double score = s.figureScore();
            if (score == null) {
                continue;
            }
            if (score != 0.0 && score != 1.0) {
                return new PassAtKFigures(Map.of());
            }
            int[] nc = counts.computeIfAbsent(s.model(), m -> new LinkedHashMap<>())
                    .computeIfAbsent(s.vignetteId(), v -> new int[2]);
            nc[0]++;
            nc[1] += score == 1.0 ? 1 : 0;
            epochs = Math.max(epochs, nc[0]);
        }
        if (epochs < 2) {
            return new PassAtKFigures(Map.of());
        }
        TreeSet<Integer> ks = new TreeSet<>(List.of(1, epochs));
        for (int k : new int[]{5, 10}) {
            if (k < epochs) {
                ks.add(k);
            }
        }
        Map<String, Map<Integer, Estimate>> out = new LinkedHashMap<>();
        for (String model : models) {
            Map<String, int[]> perVignette = counts.get(model);
            if (perVignette == null) {
                continue;
            }
            Map<Integer, Estimate> byK = new LinkedHashMap<>();
            for (int k : ks) {
                Estimate e = PassAtK.over(new ArrayList<>(perVignette.values()), k);
                if (e.n() > 0) {
                    byK.put(k, e);
                }
            }
            out.put(model, byK);
        }
        return new PassAtKFigures(out);
    }

    /** True when there is nothing to show. */
    public boolean isEmpty() {
        return byModel.isEmpty();
    }
}
