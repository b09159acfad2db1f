package dev.panoptes.coordinator;

import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.report.ModelComparison;
import dev.panoptes.report.RunData;

import java.util.List;
import java.util.Objects;

/**
 * The one line {@code compare} prints before its figures when the two sides' scores come from
 * different scorers: a difference between them then mixes the models with the scorers. It names
 * both scorings and the way to compare like with like: a scoring of one side made with the
 * other's scorer when one exists ({@code --scoring}), else the {@code rescore} command that makes
 * one. Stateless; any thread.
 */
public final class ScorerMismatch {
    private ScorerMismatch() {
    }

    /**
     * The line for two sides, or null when their scorers are the same.
     *
     * @param first    the first side (the baseline)
     * @param firstDb  its database as the user named it
     * @param second   the second side
     * @param secondDb its database
     */
    public static String line(RunData first, String firstDb, RunData second, String secondDb) {
        if (!ModelComparison.scorersDiffer(first, second)) {
            return null;
        }
        String a = first.info().runId();
        String b = second.info().runId();
        String sa = scorer(first);
        String sb = scorer(second);
        String line = "scorers differ: run " + a + " (" + scoring(first) + ") used " + sa + ", run " + b + " ("
                + scoring(second) + ") used " + sb + ", so the difference mixes models and scorers; ";
        if (a.equals(b) && firstDb.equals(secondDb)) {
            return line + "on one run it is the scorers' difference";
        }
        Scoring withSecondsScorer = latestBy(first.info().scorings(), second.info().scorer());
        if (withSecondsScorer != null) {
            return line + "run " + a + "'s scoring " + withSecondsScorer.number() + " used " + sb
                    + ": compare with --scoring " + withSecondsScorer.number() + " --scoring " + number(second);
        }
        Scoring withFirstsScorer = latestBy(second.info().scorings(), first.info().scorer());
        if (withFirstsScorer != null) {
            return line + "run " + b + "'s scoring " + withFirstsScorer.number() + " used " + sa
                    + ": compare with --scoring " + number(first) + " --scoring " + withFirstsScorer.number();
        }
        if (rescorable(first.info().scorer())) {
            return line + "rescore one side with the other's scorer (rescore --db " + secondDb + " --run " + b
                    + " --scorer " + sa + "), then compare again";
        }
        if (rescorable(second.info().scorer())) {
            return line + "rescore one side with the other's scorer (rescore --db " + firstDb + " --run " + a
                    + " --scorer " + sb + "), then compare again";
        }
        return line + "score both sides with one scorer (a judge grades through the coordinator: see"
                + " 'rescore --help'), then compare again";
    }

    private static boolean rescorable(String scorer) {
        return scorer != null && !Scorers.isJudge(scorer);
    }

    /** The latest of these scorings made with this scorer, or null. */
    private static Scoring latestBy(List<Scoring> scorings, String scorer) {
        Scoring found = null;
        for (Scoring s : scorings) {
            if (Objects.equals(s.scorer(), scorer)) {
                found = s;
            }
        }
        return found;
    }

    private static String scorer(RunData run) {
        return run.info().scorer() == null ? "no scorer" : run.info().scorer();
    }

    private static String scoring(RunData run) {
        return run.scoring() == null ? "never scored" : "scoring " + run.scoring().number();
    }

    private static int number(RunData run) {
        return run.scoring() == null ? 0 : run.scoring().number();
    }
}
