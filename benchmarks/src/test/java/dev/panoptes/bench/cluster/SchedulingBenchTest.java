package dev.panoptes.bench.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class SchedulingBenchTest {
    @Test
    void fitsThePerJobOverheadThatExplainsAMakespan() {
        SchedulingBench.Options o = new SchedulingBench.Options(1, 2000, List.of(4000L, 2000L, 1000L), 4, false, 0, false);
        // With no overhead the makespan is the ideal: 2000 / (4/4000 + 4/2000 + 4/1000) us = 285.7 ms.
        assertThat(SchedulingBench.fittedOverheadMicros(o, 2000 / 7.0)).isCloseTo(0, within(0.01));
        // With 1 ms of overhead per job: 2000 / (4/5000 + 4/3000 + 4/2000) us.
        double makespanMs = 2000 / (4 / 5000.0 + 4 / 3000.0 + 4 / 2000.0) / 1000;
        assertThat(SchedulingBench.fittedOverheadMicros(o, makespanMs)).isCloseTo(1000, within(0.01));
    }
}
