package dev.panoptes.control.cost;

import dev.panoptes.control.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PricesTest {
    @TempDir
    Path dir;

    @Test
    void anEntryNamesTheModelBeforeTheLastEqualsSignAndCostsPerMillionTokens() {
        Map.Entry<String, Price> e = Prices.parseEntry("meta-llama/Llama-3.1-8B=0.15/0.60");

        assertThat(e.getKey()).isEqualTo("meta-llama/Llama-3.1-8B");
        assertThat(e.getValue().cost(new Usage(1_000_000, 500_000))).isEqualTo(0.45);
    }

    @Test
    void aBadEntrySaysWhatIsWanted() {
        for (String bad : List.of("gpt", "gpt=1", "=1/2", "gpt=a/2", "gpt=1/2/3")) {
            assertThatThrownBy(() -> Prices.parseEntry(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("MODEL=IN/OUT").hasMessageContaining(bad);
        }
        assertThatThrownBy(() -> Prices.parseEntry("gpt=-1/2")).hasMessageContaining("0 or more");
    }

    @Test
    void aPricesFileIsReadAndEntriesOverrideIt() throws Exception {
        Path file = Files.writeString(dir.resolve("prices.json"),
                "{\"a\": {\"input\": 1, \"output\": 2}, \"b\": {\"input\": 0.5, \"output\": 0.5}}");

        Prices prices = Prices.read(file).with("b", new Price(3, 4));

        assertThat(prices.cost("a", new Usage(1_000_000, 1_000_000))).contains(3.0);
        assertThat(prices.cost("b", new Usage(1_000_000, 0))).contains(3.0);
        assertThat(prices.unpriced(List.of("a", "c", "b"))).containsExactly("c");
        Path bad = Files.writeString(dir.resolve("bad.json"), "{\"a\": {\"input\": 1}}");
        assertThatThrownBy(() -> Prices.read(bad)).hasMessageContaining("model 'a' needs \"input\" and \"output\"");
    }
}
