package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.SuiteFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class SuiteBenchTest {
    @Test
    void readsThePeakHeapBeforeAndAfterGcFromAGcLog(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("gc.log");
        Files.writeString(log, String.join("\n",
                "[0.010s][info][gc] Using G1",
                "[0.512s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms",
                "[1.512s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 200M->150M(256M) 9.1ms",
                "[1.600s][info][gc] GC(2) Concurrent Mark Cycle 80.1ms",
                "[2.000s][info][gc] GC(3) Pause Full (G1 Compaction Pause) 180M->120M(256M) 50.0ms",
                "[2.100s][info][gc] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 512K->256K(256M) 1.0ms"));
        double[] peaks = SuiteBench.gcPeaksMb(log);
        assertThat(peaks[0]).isCloseTo(200 * 1.048576, within(0.001));
        assertThat(peaks[1]).isCloseTo(150 * 1.048576, within(0.001));
        assertThat(peaks[2]).isEqualTo(4);
        assertThat(peaks[3]).isCloseTo(0.062445, within(1e-9));
    }

    @Test
    void generatedSuitesHaveTheAskedSizeAndLineShape(@TempDir Path dir) throws Exception {
        Path suite = dir.resolve("s.jsonl");
        SuiteFiles.write(suite, 100, 150);
        var lines = Files.readAllLines(suite);
        assertThat(lines).hasSize(100);
        assertThat(lines.get(0)).startsWith("{\"id\":\"v0\",\"prompt\":\"Q0:").endsWith("\"}");
        assertThat(lines).allSatisfy(l -> assertThat(l.length()).isBetween(170, 220));
    }
}
