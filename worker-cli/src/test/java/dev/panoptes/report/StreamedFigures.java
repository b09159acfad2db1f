package dev.panoptes.report;

import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Sample;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.RunSummary;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * For tests of stored runs: the figures a summary computes from the answers streamed from the
 * store ({@link RunDataLoader#stats}, none held) are those computed from every answer loaded
 * ({@link RunStats#of(RunData, String)} over {@link RunDataLoader#load}), and the accuracies
 * are those {@link Accuracy} gives for the list of samples.
 */
public final class StreamedFigures {
    private StreamedFigures() {
    }

    /**
     * Checks every run of the SQLite database {@code db}; returns how many runs it checked.
     */
    public static int assertAgree(Path db) {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            List<String> ids = RunDataLoader.runIds(store);
            for (String id : ids) {
                assertAgree(store, id);
            }
            return ids.size();
        }
    }

    /** Checks one run of {@code store}, with the group-by key it was made with. */
    public static void assertAgree(JdbcResultStore store, String runId) {
        RunData loaded = RunDataLoader.load(store, runId);
        String groupBy = RunStats.groupByOf(loaded, null);
        RunStats listed = RunStats.of(loaded, groupBy);
        RunStats streamed = RunDataLoader.stats(store, runId, 0, null, null);

        assertThat(streamed.groupBy()).isEqualTo(groupBy);
        assertThat(streamed.models()).as("per-model figures of run %s", runId).isEqualTo(listed.models());
        assertThat(streamed.comparison()).isEqualTo(listed.comparison());
        assertThat(streamed.cacheHits()).isEqualTo(listed.cacheHits());
        assertThat(streamed.passAtK()).isEqualTo(listed.passAtK());
        assertThat(streamed.choiceMetrics().byMetric()).isEqualTo(listed.choiceMetrics().byMetric());
        assertThat(streamed.choiceMetrics().byGroup()).isEqualTo(listed.choiceMetrics().byGroup());
        assertThat(streamed.choiceMetrics().perplexity()).isEqualTo(listed.choiceMetrics().perplexity());
        assertThat(streamed.choiceMetrics().perplexityByGroup()).isEqualTo(listed.choiceMetrics().perplexityByGroup());
        assertThat(streamed.scorers()).isEqualTo(listed.scorers());
        assertThat(streamed.latencyP50Ms()).isEqualTo(listed.latencyP50Ms());
        assertThat(streamed.latencyP95Ms()).isEqualTo(listed.latencyP95Ms());
        assertThat(accuracyLines(streamed)).isEqualTo(accuracyLines(listed));

        // And against the samples themselves, as lists: each model's figure with and without its
        // failed answers, per group, and the latency percentiles by sorting.
        Map<String, List<Sample>> all = new LinkedHashMap<>();
        Map<String, List<Sample>> answered = new LinkedHashMap<>();
        Map<String, List<String>> groups = new LinkedHashMap<>();
        List<Long> latencies = new ArrayList<>();
        for (SampleRow row : loaded.samples()) {
            if (row.latencyMs() != null) {
                latencies.add(row.latencyMs());
            }
            Double score = row.figureScore();
            if (score == null) {
                continue;
            }
            all.computeIfAbsent(row.model(), m -> new ArrayList<>()).add(new Sample(row.vignetteId(), score));
            groups.computeIfAbsent(row.model(), m -> new ArrayList<>())
                    .add(groupBy == null ? "" : RunStats.groupOf(row, groupBy));
            if (!row.failed()) {
                answered.computeIfAbsent(row.model(), m -> new ArrayList<>()).add(new Sample(row.vignetteId(), score));
            }
        }
        for (RunStats.ModelStats m : streamed.models()) {
            close(m.accuracy(), Accuracy.of(all.getOrDefault(m.model(), List.of())));
            close(m.withoutFailed(), Accuracy.of(answered.getOrDefault(m.model(), List.of())));
            if (groupBy != null) {
                Map<String, Estimate> byGroup = Accuracy.byGroup(all.getOrDefault(m.model(), List.of()),
                        groups.getOrDefault(m.model(), List.of()));
                assertThat(m.byGroup().keySet()).containsExactlyInAnyOrderElementsOf(byGroup.keySet());
                byGroup.forEach((g, e) -> close(m.byGroup().get(g), e));
            }
        }
        latencies.sort(null);
        assertThat(streamed.latencyP50Ms()).isEqualTo(RunStats.WorkerStats.nearestRank(latencies, 50));
        assertThat(streamed.latencyP95Ms()).isEqualTo(RunStats.WorkerStats.nearestRank(latencies, 95));
    }

    private static String accuracyLines(RunStats stats) {
        StringBuilder sb = new StringBuilder();
        RunSummary.renderAccuracy(sb, stats);
        return sb.toString();
    }

    /** Asserts that two estimates agree: n, clusters, clustering, and mean, error and interval to rounding. */
    static void close(Estimate actual, Estimate expected) {
        assertThat(actual.n()).isEqualTo(expected.n());
        assertThat(actual.clusters()).isEqualTo(expected.clusters());
        assertThat(actual.clustered()).isEqualTo(expected.clustered());
        if (expected.n() == 0) {
            return;
        }
        assertThat(actual.mean()).isCloseTo(expected.mean(), within(1e-12));
        if (expected.hasStandardError()) {
            assertThat(actual.standardError()).isCloseTo(expected.standardError(), within(1e-12));
        }
        assertThat(actual.ciLow()).isCloseTo(expected.ciLow(), within(1e-9));
        assertThat(actual.ciHigh()).isCloseTo(expected.ciHigh(), within(1e-9));
    }
}
