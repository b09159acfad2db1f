package dev.panoptes.control.score;

import dev.panoptes.control.Vignette;

/**
 * Specs {@code acc}, {@code acc_norm} and {@code acc_bytes}: a multiple-choice vignette asked by
 * log-likelihood (its answer is {@link ChoiceLoglikelihoods}' JSON) is right when the choice of
 * highest log-likelihood (acc), of highest log-likelihood per character of the choice
 * (acc_norm), or per UTF-8 byte (acc_bytes) is the expected one, an index from 0. These are
 * lm-evaluation-harness's metrics of the same names, computed as it computes them. Stateless
 * and thread-safe.
 */
final class LoglikelihoodScorer extends SpecScorer {
    static final String ACC = "acc";
    static final String ACC_NORM = "acc_norm";
    static final String ACC_BYTES = "acc_bytes";

    LoglikelihoodScorer(String spec) {
        super(spec);
    }

    @Override
    Score compare(String answer, String expected) {
        ChoiceLoglikelihoods lls;
        try {
            lls = ChoiceLoglikelihoods.parse(answer);
        } catch (IllegalArgumentException e) {
            return new Score(0, e.getMessage());
        }
        int want = Vignette.choiceIndex(expected, lls.loglikelihoods().size());
        if (want < 0) {
            return unusableExpected(expected, "is not the index of one of the " + lls.loglikelihoods().size()
                    + " choices");
        }
        int got = switch (spec()) {
            case ACC_NORM -> lls.chosenPerChar();
            case ACC_BYTES -> lls.chosenPerByte();
            default -> lls.chosen();
        };
        return new Score(got == want ? 1 : 0, "chose " + got + (got == want ? "" : ", expected " + want));
    }
}
