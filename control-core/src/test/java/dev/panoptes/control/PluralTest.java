package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PluralTest {
    @Test
    void oneTakesTheSingularAndEveryOtherCountThePlural() {
        assertThat(Plural.of(1, "worker")).isEqualTo("1 worker");
        assertThat(Plural.of(0, "worker")).isEqualTo("0 workers");
        assertThat(Plural.of(2, "job")).isEqualTo("2 jobs");
        assertThat(Plural.of(-1, "answer")).isEqualTo("-1 answer");
        assertThat(Plural.of(-40, "answer")).isEqualTo("-40 answers");
        assertThat(Plural.noun(1, "attempt")).isEqualTo("attempt");
        assertThat(Plural.noun(7, "attempt")).isEqualTo("attempts");
        assertThat(Plural.grouped(1200, "answer")).isEqualTo("1,200 answers");
    }

    @Test
    void anIrregularPluralIsUsedAsGiven() {
        assertThat(Plural.of(1, "entry", "entries")).isEqualTo("1 entry");
        assertThat(Plural.of(3, "entry", "entries")).isEqualTo("3 entries");
        assertThat(Plural.of(2, "redelivery", "redeliveries")).isEqualTo("2 redeliveries");
    }

    @Test
    void anEmptyNounIsRefused() {
        assertThatThrownBy(() -> Plural.of(2, "")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the singular noun must not be empty");
    }
}
