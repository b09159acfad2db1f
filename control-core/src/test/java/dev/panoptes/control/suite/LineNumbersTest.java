package dev.panoptes.control.suite;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A suite's line numbers kept as ints: a list like any other, frozen once in the suite. */
class LineNumbersTest {
    @Test
    void appendedLinesReadBackAsAnyListOfThemAndFreezeInTheSuite() {
        LineNumbers lines = new LineNumbers();
        List<Integer> expected = new ArrayList<>();
        for (int i = 1; i <= 1000; i++) {
            lines.add(i * 2);
            expected.add(i * 2);
        }
        assertThat(lines).isEqualTo(expected).hasSameHashCodeAs(expected);
        assertThat(lines.getInt(999)).isEqualTo(2000);
        assertThatThrownBy(() -> lines.get(1000)).isInstanceOf(IndexOutOfBoundsException.class);

        LineNumbers frozen = lines.frozen();
        assertThat(frozen).isEqualTo(expected);
        assertThat(frozen.frozen()).isSameAs(frozen);
        assertThatThrownBy(() -> frozen.add(1)).isInstanceOf(UnsupportedOperationException.class);
        lines.add(7);
        assertThat(frozen).as("a copy: the reader's list may go on").hasSize(1000);
    }

    @Test
    void aSuiteReadFromAFileKeepsItsLinesAsInts() throws Exception {
        String jsonl = "{\"id\":\"a\",\"prompt\":\"p\"}\n\n{\"id\":\"b\",\"prompt\":\"q\"}\n";
        Suite suite = new SuiteReader().read(new ByteArrayInputStream(jsonl.getBytes(StandardCharsets.UTF_8)),
                "s", "s.jsonl");
        assertThat(suite.lines()).isInstanceOf(LineNumbers.class).containsExactly(1, 3);
        assertThat(suite.lineOf(1)).contains(3);
    }
}
