package dev.panoptes.control.score;

import java.util.List;
import java.util.Objects;

/**
 * Builds scorers from their spec text, as written in eval suites and on the command line.
 *
 * <p>Specs: {@code exact}, {@code normalized}, {@code includes}, {@code regex:PATTERN},
 * {@code numeric}, {@code numeric:TOL}, {@code numeric:TOL%}, {@code choice} and
 * {@code exact_match:{JSON}} (lm-eval's metric, see {@code ExactMatchScorer}). Specs are
 * case-sensitive and not trimmed (a regex's spaces matter). {@code judge} and
 * {@code judge:MODEL} are model-graded: recognise them with {@link #isJudge(String)} and grade
 * with {@link JudgeRubric}.
 *
 * <p>Stateless and thread-safe.
 */
public final class Scorers {
    private static final String JUDGE = "judge";
    private static final String VALID_FORMS = "valid forms: exact, normalized, includes, regex:PATTERN"
            + " (with a capturing group), numeric, numeric:TOL, numeric:TOL% (TOL absolute, or relative with %),"
            + " choice, exact_match:{JSON} (lm-eval's exact_match with its options and regex filter, from task"
            + " files), and for multiple-choice vignettes asked by log-likelihood acc, acc_norm and acc_bytes;"
            + " judge and judge:MODEL are model-graded and handled by JudgeRubric";
    private static final List<String> NAMES = List.of(
            ExactScorer.SPEC, NormalizedScorer.SPEC, IncludesScorer.SPEC, "regex", NumericScorer.NAME,
            ChoiceScorer.SPEC, ExactMatchScorer.NAME, LoglikelihoodScorer.ACC, LoglikelihoodScorer.ACC_NORM, LoglikelihoodScorer.ACC_BYTES,
            JUDGE);
    /** The scorers of multiple-choice vignettes asked by log-likelihood, lm-eval's metrics. */
    private static final List<String> LOGLIKELIHOOD = List.of(LoglikelihoodScorer.ACC, LoglikelihoodScorer.ACC_NORM,
            LoglikelihoodScorer.ACC_BYTES);

    private Scorers() {
    }

    /**
     * The scorer a spec names.
     *
     * @param spec such as "exact", "numeric:0.01" or "regex:answer is (\\d+)"
     * @return an immutable, thread-safe scorer whose {@link Scorer#spec()} is this spec
     * @throws IllegalArgumentException when the spec is null, unknown, badly formed (a regex
     *                                  that does not compile or has no capturing group, a
     *                                  tolerance that is not a number), or a judge spec; the
     *                                  message names the spec, says what is wrong and lists
     *                                  the valid forms
     */
    public static Scorer parse(String spec) {
        if (spec == null) {
            throw new IllegalArgumentException("scorer spec is null; " + VALID_FORMS);
        }
        if (spec.startsWith(JUDGE + ":") && !isJudge(spec)) {
            throw bad(spec, "judge:MODEL needs a model name after the colon", null);
        }
        if (isJudge(spec)) {
            throw bad(spec, "judge is model-graded: it needs a model call, so it is not a Scorer;"
                    + " grade it with JudgeRubric (check with Scorers.isJudge)", null);
        }
        int colon = spec.indexOf(':');
        String name = colon < 0 ? spec : spec.substring(0, colon);
        String argument = colon < 0 ? null : spec.substring(colon + 1);
        try {
            switch (name) {
                case ExactScorer.SPEC:
                    return noArgument(spec, argument, new ExactScorer());
                case NormalizedScorer.SPEC:
                    return noArgument(spec, argument, new NormalizedScorer());
                case IncludesScorer.SPEC:
                    return noArgument(spec, argument, new IncludesScorer());
                case ChoiceScorer.SPEC:
                    return noArgument(spec, argument, new ChoiceScorer());
                case LoglikelihoodScorer.ACC:
                case LoglikelihoodScorer.ACC_NORM:
                case LoglikelihoodScorer.ACC_BYTES:
                    return noArgument(spec, argument, new LoglikelihoodScorer(name));
                case NumericScorer.NAME:
                    return argument == null ? NumericScorer.withDefaultTolerance() : NumericScorer.parse(argument);
                case ExactMatchScorer.NAME:
                    return new ExactMatchScorer(argument == null ? "{}" : argument);
                case "regex":
                    if (argument == null) {
                        throw new IllegalArgumentException("regex needs a pattern after the colon");
                    }
                    return new RegexScorer(argument);
                default:
                    throw new IllegalArgumentException("unknown scorer");
            }
        } catch (IllegalArgumentException e) {
            throw bad(spec, e.getMessage(), e);
        }
    }

    /**
     * The scorer names, for help texts: exact, normalized, includes, regex, numeric, choice and
     * judge. Regex needs a pattern and judge is not built by {@link #parse(String)}, so not
     * every name parses on its own.
     *
     * @return an unmodifiable list
     */
    public static List<String> names() {
        return NAMES;
    }

    /**
     * True when the spec names the model-graded scorer: "judge", or "judge:" followed by a
     * model name. Such specs are graded with {@link JudgeRubric}, not {@link #parse(String)}.
     *
     * @param spec any text, or null (which is not a judge spec)
     */
    public static boolean isJudge(String spec) {
        return spec != null && (spec.equals(JUDGE)
                || spec.startsWith(JUDGE + ":") && !spec.substring(JUDGE.length() + 1).isBlank());
    }

    /**
     * True for the scorers of multiple-choice vignettes asked by log-likelihood: {@code acc},
     * {@code acc_norm} and {@code acc_bytes}.
     */
    public static boolean isLoglikelihood(String spec) {
        return spec != null && LOGLIKELIHOOD.contains(spec);
    }

    /** The log-likelihood scorers, {@code acc}, {@code acc_norm} and {@code acc_bytes}, in that order. */
    public static List<String> loglikelihoodNames() {
        return LOGLIKELIHOOD;
    }

    /**
     * The score of {@code metric} (one of {@link #loglikelihoodNames()}) for an answer already
     * parsed, as that scorer gives it for the answer's JSON: for whoever scores many metrics of
     * one answer without parsing it again. Any thread.
     *
     * @throws IllegalArgumentException when {@code metric} is not a log-likelihood scorer
     * @throws NullPointerException     when an argument is null
     */
    public static Score loglikelihoodScore(String metric, ChoiceLoglikelihoods answer, String expected) {
        if (!isLoglikelihood(metric)) {
            throw new IllegalArgumentException(metric + " is not one of " + LOGLIKELIHOOD);
        }
        return LoglikelihoodScorer.score(metric, Objects.requireNonNull(answer, "answer"),
                Objects.requireNonNull(expected, "expected"));
    }

    private static Scorer noArgument(String spec, String argument, Scorer scorer) {
        if (argument != null) {
            throw new IllegalArgumentException(scorer.spec() + " takes no argument after a colon");
        }
        return scorer;
    }

    private static IllegalArgumentException bad(String spec, String reason, Throwable cause) {
        return new IllegalArgumentException("bad scorer spec '" + spec + "': " + reason + "; " + VALID_FORMS, cause);
    }
}
