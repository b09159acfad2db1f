package dev.panoptes.report;

import dev.panoptes.control.stats.ClusterTotals;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-vignette tallies kept in arrays ({@link VignetteTallies}) against one
 * {@link ClusterTotals} per vignette in a map, as {@link RunTally} kept them before: the same
 * totals to the last bit, in the same order, through growth from nothing; and a tally sized up
 * front that never grows.
 */
class VignetteTalliesTest {
    @Test
    void theArraysHoldWhatAClusterTotalsPerVignetteWouldInTheOrderFirstSeen() {
        Random random = new Random(17);
        VignetteTallies tallies = new VignetteTallies(0);
        Map<String, ClusterTotals> expected = new LinkedHashMap<>();
        Map<String, ClusterTotals> expectedAnswered = new LinkedHashMap<>();
        Map<String, Integer> passes = new LinkedHashMap<>();
        Map<String, String> groups = new LinkedHashMap<>();
        for (int i = 0; i < 60_000; i++) {
            String id = "v" + random.nextInt(20_000);
            String group = "g" + Math.abs(id.hashCode()) % 3;
            double score = random.nextInt(4) == 0 ? 0.5 : random.nextInt(2);
            boolean failed = random.nextInt(15) == 0;
            if (failed) {
                score = 0;
            }
            int slot = tallies.slotOf(id, group);
            tallies.add(slot, score, failed);

            ClusterTotals t = expected.computeIfAbsent(id, k -> new ClusterTotals());
            groups.putIfAbsent(id, group);
            if (failed) {
                expectedAnswered.computeIfAbsent(id, k -> {
                    ClusterTotals copy = new ClusterTotals();
                    copy.copyFrom(t);
                    return copy;
                });
            } else if (expectedAnswered.containsKey(id)) {
                expectedAnswered.get(id).add(score);
            }
            t.add(score);
            passes.merge(id, score == 1.0 ? 1 : 0, Integer::sum);
        }

        assertThat(tallies.size()).isEqualTo(expected.size());
        assertThat(tallies.indexOf("not a vignette")).isEqualTo(-1);
        List<String> ids = new ArrayList<>(expected.keySet());
        List<ClusterTotals> all = copies(tallies.all());
        for (int slot = 0; slot < ids.size(); slot++) {
            String id = ids.get(slot);
            assertThat(tallies.id(slot)).isEqualTo(id);
            assertThat(tallies.indexOf(id)).isEqualTo(slot);
            assertThat(tallies.group(slot)).isEqualTo(groups.get(id));
            assertThat(tallies.passes(slot)).isEqualTo(passes.get(id));
            assertSame(all.get(slot), expected.get(id));
            assertSame(tallies.totals(slot), expected.get(id));
        }
        List<ClusterTotals> withoutFailed = new ArrayList<>();
        for (String id : ids) {
            ClusterTotals t = expectedAnswered.getOrDefault(id, expected.get(id));
            if (t.count() > 0) {
                withoutFailed.add(t);
            }
        }
        List<ClusterTotals> actualWithoutFailed = copies(tallies.withoutFailed());
        assertThat(actualWithoutFailed).hasSameSizeAs(withoutFailed);
        for (int i = 0; i < withoutFailed.size(); i++) {
            assertSame(actualWithoutFailed.get(i), withoutFailed.get(i));
        }
        Map<String, Collection<ClusterTotals>> byGroup = tallies.byGroup();
        assertThat(byGroup).containsOnlyKeys("g0", "g1", "g2");
        for (Map.Entry<String, Collection<ClusterTotals>> g : byGroup.entrySet()) {
            List<ClusterTotals> inGroup = new ArrayList<>();
            for (String id : ids) {
                if (groups.get(id).equals(g.getKey())) {
                    inGroup.add(expected.get(id));
                }
            }
            List<ClusterTotals> actual = copies(g.getValue());
            assertThat(actual).hasSameSizeAs(inGroup);
            for (int i = 0; i < inGroup.size(); i++) {
                assertSame(actual.get(i), inGroup.get(i));
            }
        }
    }

    @Test
    void aTallySizedForItsVignettesNeverGrows() {
        VignetteTallies tallies = new VignetteTallies(5_000);
        int capacity = tallies.capacity();
        for (int epoch = 0; epoch < 3; epoch++) {
            for (int v = 0; v < 5_000; v++) {
                tallies.add(tallies.slotOf("q" + v, null), v % 2, false);
            }
        }
        assertThat(tallies.size()).isEqualTo(5_000);
        assertThat(tallies.capacity()).as("no array made again").isEqualTo(capacity).isEqualTo(5_000);
    }

    /** The iterator's elements are a view moved along: each copied as it comes. */
    private static List<ClusterTotals> copies(Collection<ClusterTotals> totals) {
        List<ClusterTotals> out = new ArrayList<>(totals.size());
        for (ClusterTotals t : totals) {
            out.add(ClusterTotals.of(t.count(), t.sum(), t.mean(), t.squares()));
        }
        assertThat(out).hasSize(totals.size());
        return out;
    }

    private static void assertSame(ClusterTotals actual, ClusterTotals expected) {
        assertThat(actual.count()).isEqualTo(expected.count());
        assertThat(actual.sum()).isEqualTo(expected.sum());
        assertThat(actual.mean()).isEqualTo(expected.mean());
        assertThat(actual.squares()).isEqualTo(expected.squares());
    }
}
