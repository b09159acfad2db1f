package dev.panoptes.control.score;

import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Transcripts;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.RecordScoring;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.StoredRecord;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A run's scoring: its scorer, overridden by a vignette's own {@code scorer} where it has one.
 * A vignette without an expected answer (absent or empty) is not scored and stays out of every
 * accuracy figure; a model-graded ({@code judge}) answer is stored with an empty score, to be
 * graded by a judge model afterwards.
 *
 * <p>Thread-safe.
 */
public final class RunScoring implements RecordScoring {
    /** The start of the explanation of an answer that could not be scored. */
    public static final String NOT_SCORED = "not scored: ";
    /** The scorer of a vignette that declares a sandbox check: the check's exit status. */
    public static final String CHECK = "check";
    private final String defaultSpec;
    private final Map<String, Scorer> parsed = new ConcurrentHashMap<>();

    /**
     * @param defaultSpec the run's scorer, such as {@code "exact"} or {@code "judge:gpt-4o"}
     * @throws IllegalArgumentException when the spec is not a scorer
     */
    public RunScoring(String defaultSpec) {
        this.defaultSpec = check(defaultSpec);
    }

    /**
     * Checks a scorer spec without scoring anything.
     *
     * @return the spec
     * @throws IllegalArgumentException naming what is wrong and the valid forms
     */
    public static String check(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("no scorer given; use one of " + String.join(", ", Scorers.names()));
        }
        if (!Scorers.isJudge(spec)) {
            Scorers.parse(spec);
        }
        return spec;
    }

    /** The run's own scorer spec. */
    public String defaultSpec() {
        return defaultSpec;
    }

    /** The run's own scorer spec: what the scorings it makes are named. */
    @Override
    public String spec() {
        return defaultSpec;
    }

    /**
     * The spec that scores {@code v}: its own, or the run's; for a multiple-choice vignette whose
     * run scorer is not a log-likelihood one, {@code acc} (a text scorer cannot read its answer).
     */
    public String specFor(Vignette v) {
        if (v.sandbox() != null && v.sandbox().check() != null) {
            return CHECK;
        }
        if (v.scorer() != null) {
            return v.scorer();
        }
        return v.isMultipleChoice() && !Scorers.isLoglikelihood(defaultSpec) ? "acc" : defaultSpec;
    }

    @Override
    public ScoreEntry score(Vignette vignette, ResponseRecord record) {
        if (vignette.sandbox() != null && vignette.sandbox().check() != null) {
            return checked(record);
        }
        return score(specFor(vignette), vignette.expected(), record.response());
    }

    /**
     * The score of an answer whose vignette declares a check: the check's verdict, run by the
     * worker in the sample's sandbox (exit status 0 passes), whatever the expected answer.
     */
    static ScoreEntry checked(ResponseRecord record) {
        Boolean passed = Transcripts.checkPassed(record.transcript());
        if (passed == null) {
            return new ScoreEntry(CHECK, null, NOT_SCORED + "the answer's transcript holds no check verdict (the"
                    + " worker that ran it did not run the vignette's check)");
        }
        String limit = Transcripts.limit(record.transcript());
        return new ScoreEntry(CHECK, passed ? 1.0 : 0.0, Transcripts.checkSummary(record.transcript())
                + (limit == null ? "" : " (the sample met its " + limit + " limit)"));
    }

    /**
     * The sandbox check's verdict on a stored answer, for a rescoring: the score the latest
     * scoring holds when a check gave it, else the verdict in the answer's transcript. A check
     * cannot be run again afterwards (it ran in the sample's sandbox, after the trajectory that
     * left the work folder as the check found it, and that sandbox is gone), so another scorer
     * never replaces it.
     *
     * @return the check's entry; null when no check scored this answer
     */
    public static ScoreEntry checkVerdict(StoredRecord stored) {
        if (stored.score() != null && CHECK.equals(stored.score().scorer())) {
            return stored.score();
        }
        return Transcripts.checkPassed(stored.record().transcript()) == null ? null : checked(stored.record());
    }

    /**
     * Scores an answer against an expected answer with a scorer spec.
     *
     * @return null when {@code expected} is null or empty (nothing to score against); an entry
     *         with a null score for a judge spec (graded later); an entry with a null score and
     *         the reason, starting {@value #NOT_SCORED}, when the vignette's own scorer does not
     *         parse or the scorer cannot score this answer ({@link UnscorableAnswerException})
     */
    public ScoreEntry score(String spec, String expected, String answer) {
        if (expected == null || expected.isEmpty()) {
            return null;
        }
        if (Scorers.isJudge(spec)) {
            return new ScoreEntry(spec, null, null);
        }
        Scorer scorer;
        try {
            scorer = parsed.computeIfAbsent(spec, Scorers::parse);
        } catch (IllegalArgumentException e) {
            // A vignette's own scorer that does not parse: say so on the record, and score it not.
            return new ScoreEntry(spec, null, NOT_SCORED + e.getMessage());
        }
        Score s;
        try {
            s = scorer.score(answer == null ? "" : answer, expected);
        } catch (UnscorableAnswerException e) {
            // Not wrong, just not scored: the answer stays out of every accuracy figure.
            return new ScoreEntry(spec, null, NOT_SCORED + e.getMessage());
        }
        return new ScoreEntry(spec, s.value(), s.explanation());
    }

    /** The judge model of a scorer spec, or null when it is not a judge spec or names none. */
    public static String judgeModelOf(String spec) {
        return spec != null && Scorers.isJudge(spec) ? judgeModel(spec) : null;
    }

    /** The judge model named by a judge spec ({@code "judge:MODEL"}), or null for plain {@code "judge"}. */
    public static String judgeModel(String spec) {
        int colon = spec.indexOf(':');
        return colon < 0 ? null : spec.substring(colon + 1);
    }

    @Override
    public String toString() {
        return "RunScoring[" + defaultSpec + "]";
    }
}
