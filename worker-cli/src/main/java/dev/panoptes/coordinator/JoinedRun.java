package dev.panoptes.coordinator;

import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.Suite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What a coordinator joins in its database: the run its command describes, resumed when the
 * database holds it and new otherwise (saying which runs of the same suite it did not join, and
 * why), and the scoring its answers go into. Called by {@link CoordinatorRun} once the store is
 * open and the run locked, on the run's thread.
 */
final class JoinedRun {
    /** At most this many other runs of the suite are named in the new-run line. */
    private static final int MAX_NAMED = 3;

    private JoinedRun() {
    }

    /**
     * The line that says what the command joined: {@code "resuming run X: N of M answers stored"},
     * or {@code "new run X: run Y of this suite differs in models [a] -> [b]"} naming every run
     * of the same suite (same content hash, or same suite path) the database holds, or
     * {@code "new run X"} when it holds none.
     *
     * @param earlier       the runs the database noted before this command
     * @param storedAnswers answers the database holds for this command's run
     * @param answers       answers the run asks for
     */
    static String describe(List<RunEntry> earlier, RunManifest manifest, long storedAnswers, int answers) {
        String runId = manifest.runId();
        for (RunEntry e : earlier) {
            if (e.runId().equals(runId)) {
                return "resuming run " + runId + ": " + storedAnswers + " of " + answers + " answers stored";
            }
        }
        List<String> others = new ArrayList<>();
        for (RunEntry e : earlier) {
            boolean sameSuite = e.manifest() != null ? e.manifest().suiteSha256().equals(manifest.suiteSha256())
                    || e.suite().equals(manifest.suite()) : e.suite().equals(manifest.suite());
            if (sameSuite) {
                others.add(differences(e, manifest));
            }
        }
        if (others.isEmpty()) {
            return "new run " + runId;
        }
        StringBuilder b = new StringBuilder("new run ").append(runId).append(": ");
        b.append(String.join("; ", others.subList(0, Math.min(MAX_NAMED, others.size()))));
        if (others.size() > MAX_NAMED) {
            int more = others.size() - MAX_NAMED;
            b.append("; and ").append(more).append(more == 1 ? " more run" : " more runs").append(" of this suite");
        }
        return b.toString();
    }

    /**
     * The manifest to note for this command's run: {@code manifest} itself when the command gave
     * a {@code --group-by} key (the latest given wins) or the run is new; otherwise, resuming a run
     * first made with a key, {@code manifest} with that key, so that resuming without it does not
     * make the report forget how the run is broken down.
     *
     * @param earlier the runs the database noted before this command
     */
    static RunManifest keepGroupBy(List<RunEntry> earlier, RunManifest manifest) {
        if (manifest.groupBy() != null) {
            return manifest;
        }
        String runId = manifest.runId();
        for (RunEntry e : earlier) {
            if (e.runId().equals(runId) && e.manifest() != null && e.manifest().groupBy() != null) {
                return manifest.withGroupBy(e.manifest().groupBy());
            }
        }
        return manifest;
    }

    private static String differences(RunEntry e, RunManifest manifest) {
        if (e.manifest() == null) {
            return "run " + e.runId() + " of this suite was planned by an older Panoptes, whose run ids covered"
                    + " neither models nor epochs (it asked " + e.models() + ", " + e.epochs()
                    + (e.epochs() == 1 ? " epoch" : " epochs") + ")";
        }
        List<String> d = e.manifest().identityDifferences(manifest);
        return "run " + e.runId() + " of this suite differs in " + (d.isEmpty() ? "how its id was made" : String.join(
                ", ", d));
    }

    /**
     * Makes the scoring this command's answers go into: the run's latest when it has the command's
     * scorer; otherwise a new scoring (origin {@link Scoring#RUN}) that scores every stored answer
     * with it (a judge scorer's answers then wait for the judge phase), saying so when the run had
     * another scoring before. Earlier scorings are kept.
     *
     * @return the scoring the run's answers go into now
     */
    static Scoring scoring(JdbcResultStore store, String runId, RunScoring scoring, Suite suite,
                           Consumer<String> say) {
        Scoring latest = store.latestScoring(runId);
        if (latest != null && latest.scorer().equals(scoring.spec())) {
            return latest;
        }
        // Made on the first stored answer to score again: a new run has none, and a million
        // vignettes' map cost a fifth of a second and a young collection for nothing.
        Map<String, Vignette> byId = new HashMap<>();
        Scoring made = store.newScoring(runId, scoring.spec(), Scoring.RUN, r -> {
            if (byId.isEmpty()) {
                for (Vignette v : suite.vignettes()) {
                    byId.put(v.id(), v);
                }
            }
            Vignette v = byId.get(r.record().vignetteId());
            return v != null ? scoring.score(v, r.record())
                    : scoring.score(scoring.spec(), r.context().expected(), r.record().response());
        });
        if (latest != null) {
            long stored = store.recordCount(runId);
            say.accept("run " + runId + ": scoring " + made.number() + " with " + made.scorer() + " (scoring "
                    + latest.number() + " used " + latest.scorer() + ", and is kept: report --scoring "
                    + latest.number() + "); " + stored + (stored == 1 ? " stored answer" : " stored answers")
                    + " scored again");
        }
        return made;
    }
}
