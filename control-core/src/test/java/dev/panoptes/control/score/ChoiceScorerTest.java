package dev.panoptes.control.score;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ChoiceScorerTest {
    private final Scorer choice = Scorers.parse("choice");

    private String chosen(String answer) {
        return choice.score(answer, "J").explanation();
    }

    @Test
    void readsALoneLetterInItsUsualWrappings() {
        assertThat(chosen("B")).isEqualTo("chose B, expected J");
        assertThat(chosen("(B)")).isEqualTo("chose B, expected J");
        assertThat(chosen("B.")).isEqualTo("chose B, expected J");
        assertThat(chosen("B)")).isEqualTo("chose B, expected J");
        assertThat(chosen("**B**")).isEqualTo("chose B, expected J");
        assertThat(chosen(" b\n")).isEqualTo("chose B, expected J");
    }

    @Test
    void findsTheChoiceNamedInProse() {
        assertThat(chosen("Answer: B")).isEqualTo("chose B, expected J");
        assertThat(chosen("The answer is (c).")).isEqualTo("chose C, expected J");
        assertThat(chosen("I think the correct option is D because it is the only prime.")).isEqualTo("chose D, expected J");
        assertThat(chosen("**Answer:** E")).isEqualTo("chose E, expected J");
        assertThat(chosen("Looking at the options, Paris is the capital, so **B**.")).isEqualTo("chose B, expected J");
        assertThat(chosen("The final answer is $\\boxed{F}$")).isEqualTo("chose F, expected J");
        assertThat(chosen("C) Rome, since it is the capital.")).isEqualTo("chose C, expected J");
        assertThat(chosen("I would go with G over H? No: G")).isEqualTo("chose G, expected J");
    }

    @Test
    void doesNotMistakeTheArticleAOrThePronounIForAChoice() {
        assertThat(chosen("A good question; the answer is C")).isEqualTo("chose C, expected J");
        assertThat(chosen("A careful reading suggests D.")).isEqualTo("chose D, expected J");
        assertThat(chosen("D, I think.")).isEqualTo("chose D, expected J");
        assertThat(chosen("To answer a question like this, pick B")).isEqualTo("chose B, expected J");
        assertThat(chosen("The answer is A because the others are wrong.")).isEqualTo("chose A, expected J");
    }

    @Test
    void laterRestatementsWinWithinARule() {
        assertThat(chosen("The answer is B. Wait, no: the answer is C.")).isEqualTo("chose C, expected J");
    }

    @Test
    void scoresTheChosenLetterAgainstAnExpectedLetterInAnyCase() {
        assertThat(choice.score("The answer is (c).", "C")).isEqualTo(new Score(1, "chose C"));
        assertThat(choice.score("Answer: B", "(b)")).isEqualTo(new Score(1, "chose B"));
        assertThat(choice.score("Answer: B", "B) Paris")).isEqualTo(new Score(1, "chose B"));
        assertThat(choice.score("Answer: B", "C")).isEqualTo(new Score(0, "chose B, expected C"));
    }

    @Test
    void saysWhenNoLetterIsFound() {
        assertThat(choice.score("I am not sure, maybe the second one.", "B"))
                .isEqualTo(new Score(0, "no choice letter A-J found in the answer"));
        assertThat(choice.score("", "B")).isEqualTo(new Score(0, "no choice letter A-J found in the answer"));
        assertThat(choice.score("The letter K", "B")).isEqualTo(new Score(0, "no choice letter A-J found in the answer"));
    }

    @Test
    void anExpectedAnswerThatIsNoLetterScoresZeroInsteadOfThrowing() {
        assertThat(choice.score("B", "Paris")).isEqualTo(new Score(0, "expected answer 'Paris' is not a choice letter A-J"));
    }
}
