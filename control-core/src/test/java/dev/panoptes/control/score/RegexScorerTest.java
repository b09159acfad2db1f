package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RegexScorerTest {
    @Test
    void comparesGroupOneOfTheLastMatchAfterNormalization() {
        Scorer scorer = Scorers.parse("regex:[Aa]nswer: (.+)");
        assertThat(scorer.score("Answer: London\nOn reflection...\nanswer: The Paris.", "paris"))
                .isEqualTo(new Score(1, "captured 'The Paris.'"));
        assertThat(scorer.score("answer: Paris\nanswer: Lyon", "Paris"))
                .isEqualTo(new Score(0, "captured 'Lyon', expected 'Paris'"));
    }

    @Test
    void noMatchScoresZeroNamingThePattern() {
        Scorer scorer = Scorers.parse("regex:#### (\\d+)");
        assertThat(scorer.score("The answer is 42", "42")).isEqualTo(new Score(0, "no match for /#### (\\d+)/"));
        assertThat(scorer.score("work...\n#### 42", "42").value()).isEqualTo(1);
    }

    @Test
    void keepsColonsInThePatternAndRoundTripsItsSpec() {
        Scorer scorer = Scorers.parse("regex:time: (\\d+:\\d+)");
        assertThat(scorer.spec()).isEqualTo("regex:time: (\\d+:\\d+)");
        assertThat(scorer.score("time: 10:30", "1030").value()).isEqualTo(1);
    }

    @Test
    void rejectsAPatternThatDoesNotCompile() {
        assertThatThrownBy(() -> Scorers.parse("regex:answer (\\d+"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bad scorer spec 'regex:answer (\\d+': pattern /answer (\\d+/ does not compile: Unclosed group")
                .hasMessageContaining("valid forms: exact, normalized");
    }

    @Test
    void rejectsAPatternWithoutACapturingGroup() {
        assertThatThrownBy(() -> Scorers.parse("regex:answer \\d+"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bad scorer spec 'regex:answer \\d+': pattern /answer \\d+/ has no capturing group;"
                        + " wrap the part to compare in ( )");
        assertThatThrownBy(() -> Scorers.parse("regex:(?:x)"))
                .hasMessageContaining("has no capturing group");
    }

    @Test
    void rejectsAnEmptyPattern() {
        assertThatThrownBy(() -> Scorers.parse("regex:")).hasMessageStartingWith("bad scorer spec 'regex:': the pattern is empty");
        assertThatThrownBy(() -> Scorers.parse("regex"))
                .hasMessageStartingWith("bad scorer spec 'regex': regex needs a pattern after the colon");
    }
}
