package dev.panoptes.control.score;

import java.util.Optional;

/**
 * Spec {@code choice}: multiple choice with letters A to J. The letter picked is found in the
 * answer's prose by {@link ChoiceExtraction}; the expected answer is a letter, case-insensitive,
 * possibly wrapped ("B", "(b)") or followed by its text ("B) Paris"). Stateless and
 * thread-safe.
 */
final class ChoiceScorer extends SpecScorer {
    static final String SPEC = "choice";

    ChoiceScorer() {
        super(SPEC);
    }

    @Override
    Score compare(String answer, String expected) {
        Optional<Character> want = ChoiceExtraction.expectedLetter(expected);
        if (want.isEmpty()) {
            return unusableExpected(expected, "is not a choice letter A-J");
        }
        Optional<Character> got = ChoiceExtraction.chosenLetter(answer);
        if (got.isEmpty()) {
            return new Score(0, "no choice letter A-J found in the answer");
        }
        boolean correct = got.get().equals(want.get());
        return new Score(correct ? 1 : 0, "chose " + got.get() + (correct ? "" : ", expected " + want.get()));
    }
}
