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

    @Test
    void aPatternThatBacktracksCatastrophicallyGivesUpWithinItsBudgetAndSaysWhy() {
        // The back reference keeps the engine from remembering where the loop failed before.
        Scorer scorer = Scorers.parse("regex:((a+)+\\2b)");
        String answer = "a".repeat(40);
        long start = System.nanoTime();
        assertThatThrownBy(() -> scorer.score(answer, "ab")).isInstanceOf(UnscorableAnswerException.class)
                .hasMessage("regex /((a+)+\\2b)/ gave up on a 40-character answer after reading 1,040,000 characters"
                        + " (it backtracks too much on it); simplify the pattern (anchor it, or make what it repeats"
                        + " unambiguous)");
        // 2^40 steps unbounded; the budget stops it in a few milliseconds.
        assertThat(System.nanoTime() - start).isLessThan(5_000_000_000L);
    }

    @Test
    void aPatternThatOverflowsTheStackOnALongAnswerSaysSo() {
        Scorer scorer = Scorers.parse("regex:((?:a|b)+)");
        String answer = "re: " + "ab".repeat(200_000);
        assertThatThrownBy(() -> scorer.score(answer, "ab")).isInstanceOf(UnscorableAnswerException.class)
                .hasMessageStartingWith("regex /((?:a|b)+)/ overflowed the stack on a 400,004-character answer")
                .hasMessageContaining("[ab]+ for (?:a|b)+");
        // The character class scans the same answer without recursing, within the budget.
        assertThat(Scorers.parse("regex:([ab]+)").score(answer, "ab").value()).isZero();
    }

    @Test
    void theBudgetLeavesAnOrdinaryScanOfALongAnswerAlone() {
        Scorer scorer = Scorers.parse("regex:[Aa]nswer: (\\d+)");
        String answer = "Let me think. ".repeat(20_000) + "answer: 12 and then answer: 42";
        assertThat(scorer.score(answer, "42")).isEqualTo(new Score(1, "captured '42'"));
    }

    @Test
    void runScoringStoresAnAnswerItsScorerCannotScoreUnscoredWithTheReason() {
        RunScoring scoring = new RunScoring("regex:((a+)+\\2b)");
        dev.panoptes.control.store.ScoreEntry entry = scoring.score("regex:((a+)+\\2b)", "ab", "a".repeat(40));
        assertThat(entry.score()).isNull();
        assertThat(entry.explanation()).startsWith("not scored: regex /((a+)+\\2b)/ gave up on a 40-character answer");
    }
}
