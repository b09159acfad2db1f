package dev.panoptes.control.task;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The draws CPython 3 makes with random.Random(1234), printed by python3 and pasted here. */
class PythonRandomTest {
    @Test
    void theFirst32BitWordsAreCPythonsForSeed1234() {
        PythonRandom r = new PythonRandom(1234);
        // [r.getrandbits(32) for _ in range(3)]
        assertThat(List.of(r.nextUint32(), r.nextUint32(), r.nextUint32()))
                .containsExactly(4150886329L, 3342196574L, 1892932127L);
    }

    @Test
    void sampleDrawsCPythonsElementsInItsOrderFromSmallAndLargePopulations() {
        PythonRandom r = new PythonRandom(1234);
        // r.sample(range(10), 4), r.sample(range(10), 4), r.sample(range(100), 6): the last through the set branch
        assertThat(r.sample(range(10), 4)).containsExactly(7, 1, 0, 9);
        assertThat(r.sample(range(10), 4)).containsExactly(9, 0, 1, 8);
        assertThat(r.sample(range(100), 6)).containsExactly(98, 45, 30, 2, 3, 44);
    }

    @Test
    void successiveSamplesContinueOneSequenceAsLmEvalsSamplerDoes() {
        PythonRandom r = new PythonRandom(1234);
        List<List<Integer>> drawn = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            drawn.add(r.sample(range(5), 3));
        }
        assertThat(drawn).containsExactly(List.of(3, 0, 4), List.of(0, 4, 2), List.of(0, 4, 1), List.of(1, 0, 3));
    }

    private static List<Integer> range(int n) {
        return IntStream.range(0, n).boxed().toList();
    }
}
