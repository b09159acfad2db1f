package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KvTest {
    @Test
    void roundTripsATagAndItsPairsWithSpacesReplaced() {
        String line = Kv.line("RESULT", "k", 64, "jobs", 123456L, "threads", "io 0:95%");
        Kv kv = Kv.parse(line);
        assertThat(kv.tag()).isEqualTo("RESULT");
        assertThat(kv.intValue("k")).isEqualTo(64);
        assertThat(kv.longValue("jobs")).isEqualTo(123456L);
        assertThat(kv.get("threads")).isEqualTo("io_0:95%");
        assertThat(kv.get("missing", "none")).isEqualTo("none");
    }

    @Test
    void aBareTagHasNoPairs() {
        assertThat(Kv.parse("MEASURE-START").values()).isEmpty();
    }
}
