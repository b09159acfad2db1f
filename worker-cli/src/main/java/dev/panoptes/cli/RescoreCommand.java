package dev.panoptes.cli;

import dev.panoptes.control.Plural;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunLocks;
import dev.panoptes.coordinator.RunSummary;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar rescore --db FILE --scorer SCORER}: scores the stored answers again
 * with another scorer, without calling any model, into a new scoring of each run (the earlier
 * ones are kept), and prints which scoring it made and the new accuracy per model (and per group
 * with {@code --group-by}). An answer a sandbox check scored keeps its verdict
 * ({@link RunScoring#checkVerdict}). For a user who fixes a regex or picks a fairer scorer after the fleet
 * has run.
 */
@Command(name = "rescore",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Scores the stored answers again with another scorer, without calling any model, and prints"
                + " the new accuracy per model. The new scores are a new scoring of each run: the earlier scorings"
                + " are kept, and report and results show the latest unless --scoring says otherwise.",
            "A model-graded scorer (judge:MODEL) needs the fleet: run the coordinator with --scorer judge:MODEL"
                    + " instead.",
            "An answer scored by its vignette's sandbox check keeps the check's verdict: the check ran in the"
                    + " sample's sandbox, which is gone; run the suite again to check anew.",
            "A run a coordinator is running is not rescored (on SQLite: no run while a coordinator uses the"
                    + " database), since the answers it stores meanwhile would be left out of the scoring."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:rescored", "1:the database could not be read or written, or a coordinator is running"
                + " the run (it is not rescored)",
            "2:invalid command line, or no such run"})
final class RescoreCommand extends StoredRunsCommand implements Callable<Integer> {
    @Option(names = "--scorer", order = 20, paramLabel = "SCORER", required = true,
            description = "exact, normalized, includes, regex:PATTERN, numeric[:TOL|:TOL%%] or choice. Required.")
    private String scorer;

    @Option(names = "--group-by", order = 30, paramLabel = "KEY",
            description = "Also break the new accuracy down by this metadata key.")
    private String groupBy;


    @Override
    @SuppressWarnings("try") // the hold is there to be held, not used
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        if (Scorers.isJudge(scorer)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--scorer': " + scorer
                    + " is model-graded and needs the fleet; run the coordinator again with --scorer " + scorer
                    + " (it grades without asking the models again only when their answers are stored)");
        }
        RunScoring scoring;
        try {
            scoring = new RunScoring(scorer);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--scorer': " + e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcResultStore store = target.open()) {
            List<RunData> runs = ResultsCommand.load(spec, store, database.run, 0);
            for (RunData data : runs) {
                String id = data.info().runId();
                if (RunDataLoader.NO_RUN.equals(id)) {
                    // Scorings belong to runs; such records (stored through the library without their job) have none.
                    out.printf("%s stored without a run: not rescored (they have no expected answer to score"
                            + " against)%n", Plural.of(data.samples().size(), "record"));
                    continue;
                }
                Scoring before = data.scoring();
                Scoring made;
                int[] checked = {0};
                // A coordinator running the run stores answers meanwhile: a scoring made now would
                // leave them unscored. Refused while a coordinator holds it, as runs delete is.
                try (RunLocks.Hold hold = RunLocks.exclusive(target, id, "rescore it")) {
                    made = store.rescore(id, scorer, r -> {
                        ScoreEntry verdict = RunScoring.checkVerdict(r);
                        if (verdict != null) {
                            checked[0]++;
                            return verdict;
                        }
                        return scoring.score(scorer, r.context().expected(), r.record().response());
                    });
                }
                RunData rescored = RunDataLoader.load(store, id, made.number());
                RunStats stats = RunStats.of(rescored, RunStats.groupByOf(rescored, groupBy));
                out.printf("run %s: scoring %d made with %s: %s scored again%s%n", id, made.number(), scorer,
                        Plural.of(data.samples().size(), "answer"),
                        before == null ? "" : "; scoring " + before.number() + " (" + before.scorer()
                                + ") is kept: --scoring " + before.number() + " shows it");
                if (checked[0] > 0) {
                    out.printf("  %s scored by a sandbox check %s the check's verdict: a check ran in the"
                            + " sample's sandbox, which is gone, so it cannot run again; to check anew, run the"
                            + " suite again%n", Plural.of(checked[0], "answer"), checked[0] == 1 ? "keeps" : "keep");
                }
                StringBuilder lines = new StringBuilder();
                RunSummary.renderAccuracy(lines, stats);
                out.print(lines);
            }
        }
        out.flush();
        return 0;
    }
}
