package dev.panoptes.control.score;

import dev.panoptes.control.Vignette;

/**
 * Specs {@code acc}, {@code acc_norm} and {@code acc_bytes}: a multiple-choice vignette asked by
 * log-likelihood (its answer is {@link ChoiceLoglikelihoods}' JSON) is right when the choice of
 * highest log-likelihood (acc), of highest log-likelihood per character of the choice
 * (acc_norm), or per UTF-8 byte (acc_bytes) is the expected one, an index from 0. These are
 * lm-evaluation-harness's metrics of the same names, computed as it computes them.
 *
 * <p>A vignette of one choice is lm-eval's {@code loglikelihood} request (a continuation, not a
 * choice among several): its {@code acc} is lm-eval's for that output type, {@code is_greedy}
 * (1 when every token of the continuation was the model's top one). {@code acc_norm} and
 * {@code acc_bytes} compare choices, so a one-choice vignette scores 0 under them with an
 * explanation saying so. Stateless and thread-safe.
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
        return score(spec(), lls, expected);
    }

    /** {@code metric}'s score of an answer already parsed: what {@link #compare} gives for its JSON. */
    static Score score(String metric, ChoiceLoglikelihoods lls, String expected) {
        int want = Vignette.choiceIndex(expected, lls.loglikelihoods().size());
        if (want < 0) {
            return unusableExpected(expected, "is not the index of one of the " + lls.loglikelihoods().size()
                    + " choices");
        }
        if (lls.isContinuation()) {
            if (!metric.equals(ACC)) {
                return new Score(0, metric + " compares choices; this vignette has one continuation (lm-eval's"
                        + " loglikelihood): score it acc, whether the continuation is the greedy one");
            }
            boolean greedy = lls.greedy().get(0);
            return new Score(greedy ? 1 : 0, greedy ? "greedy" : "not greedy: some token of the continuation was not"
                    + " the model's top one");
        }
        int got = switch (metric) {
            case ACC_NORM -> lls.chosenPerChar();
            case ACC_BYTES -> lls.chosenPerByte();
            default -> lls.chosen();
        };
        return new Score(got == want ? 1 : 0, "chose " + got + (got == want ? "" : ", expected " + want));
    }
}
