package dev.panoptes.worker;

import dev.panoptes.control.Plural;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.worker.report.RunData;
import dev.panoptes.worker.report.RunDataLoader;
import dev.panoptes.worker.report.RunStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar rescore --db FILE --scorer SCORER}: scores the stored answers again
 * with another scorer, without calling any model, and prints the new accuracy per model. For a
 * user who fixes a regex or picks a fairer scorer after the fleet has run.
 */
@Command(name = "rescore",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Scores the stored answers again with another scorer, without calling any model, and prints"
                + " the new accuracy per model. The new scores replace the old ones in the database.",
            "A model-graded scorer (judge:MODEL) needs the fleet: run the coordinator with --scorer judge:MODEL"
                    + " instead."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:rescored", "1:the database could not be read or written",
            "2:invalid command line, or no such run"})
final class RescoreCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Mixin
    private DatabaseOptions database;

    @Option(names = "--scorer", order = 20, paramLabel = "SCORER", required = true,
            description = "exact, normalized, includes, regex:PATTERN, numeric[:TOL|:TOL%%] or choice. Required.")
    private String scorer;


    @Override
    public Integer call() {
        verbose.apply();
        DatabaseTarget target = database.existing(spec);
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
            List<RunData> runs = ResultsCommand.load(spec, store, database.run);
            for (RunData data : runs) {
                String id = data.info().runId();
                boolean orphans = RunDataLoader.NO_RUN.equals(id);
                // Records stored without a run live under no run id: rescore those, and leave the rest.
                store.rescore(orphans ? null : id, r -> orphans && r.context().runId() != null ? r.score()
                        : scoring.score(scorer, r.context().expected(), r.record().response()));
                int n = data.samples().size();
                RunStats stats = RunStats.of(RunDataLoader.load(store, id), null);
                out.printf("run %s: %s scored again with %s%n", id, Plural.of(n, "answer"), scorer);
                for (RunStats.ModelStats m : stats.models()) {
                    out.printf("  %s: %s%s%n", m.model(), RunSummary.line(m.accuracy()),
                            m.unscored() > 0
                                    ? "; " + Plural.of(m.unscored(), "answer") + " unscored (no expected answer)" : "");
                }
            }
        }
        out.flush();
        return 0;
    }
}
