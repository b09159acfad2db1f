package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DistinctIdsTest {
    @Test
    void saysWhetherEachIdWasSeenBeforeAsAHashSetDoesThroughEveryGrowth() {
        DistinctIds ids = new DistinctIds(1);
        Set<String> reference = new HashSet<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            // Sequential ids, as a generated suite has, and repeats among them.
            String id = "q" + random.nextInt(150_000);
            assertThat(ids.add(id)).as(id).isEqualTo(reference.add(id));
        }
        assertThat(ids.size()).isEqualTo(reference.size());
    }

    @Test
    void idsWithTheSameHashAreToldApart() {
        DistinctIds ids = new DistinctIds(4);
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        assertThat(ids.add("Aa")).isTrue();
        assertThat(ids.add("BB")).isTrue();
        assertThat(ids.add("Aa")).isFalse();
        assertThat(ids.add("BB")).isFalse();
        assertThat(ids.add("")).isTrue();
        assertThat(ids.add("")).isFalse();
        assertThatThrownBy(() -> ids.add(null)).isInstanceOf(NullPointerException.class);
    }
}
