package dev.panoptes.cli;

import dev.panoptes.control.Plural;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunDeletion;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunLocks;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunOverview;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar runs delete ID --db FILE|URL [--yes]}: removes a run and everything
 * stored for it in one transaction ({@link JdbcResultStore#deleteRun}), after asking on a
 * terminal unless {@code --yes}; without a terminal and without {@code --yes} it refuses. The run
 * is held against coordinators from before asking until it is gone ({@link RunLocks#exclusive}),
 * so a run a coordinator holds is refused, and none can start it meanwhile.
 */
@Command(name = "delete",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Removes a run and everything stored for it (answers, scores of every scoring, failed jobs,"
                + " worker events, its manifest) in one transaction. Other runs are not touched.",
            "Asks first on a terminal; --yes deletes without asking (needed when standard input is not a"
                    + " terminal). A run a coordinator is running is not deleted (on SQLite: no run, while a"
                    + " coordinator uses the database)."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:deleted", "1:not confirmed, a coordinator holds the run, or the database could not be"
                + " read or written", "2:invalid command line, no such run, or no --yes without a terminal"})
final class RunsDeleteCommand extends StoredRunCommand implements Callable<Integer> {
    @Option(names = {"-y", "--yes"}, order = 20, description = "Delete without asking.")
    private boolean yes;

    private final Prompt prompt;

    /** @param prompt who confirms the deletion without {@code --yes} */
    RunsDeleteCommand(Prompt prompt) {
        this.prompt = prompt;
    }

    @Override
    @SuppressWarnings("try") // the hold is there to be held, not used
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcResultStore store = target.open()) {
            String runId = runId(store);
            if (!yes && !prompt.interactive()) {
                throw new ParameterException(spec.commandLine(), "run " + runId + " is not deleted: standard input"
                        + " is not a terminal, so nobody can confirm; pass --yes to delete it without asking");
            }
            try (RunLocks.Hold hold = RunLocks.exclusive(target, runId)) {
                if (!yes && !confirmed(out, RunOverview.of(RunDataLoader.stats(store, runId, 0, null, null)))) {
                    out.println("run " + runId + " is not deleted");
                    out.flush();
                    return 1;
                }
                RunDeletion removed = store.deleteRun(runId);
                out.println("deleted run " + runId + ": " + describe(removed));
            }
        }
        out.flush();
        return 0;
    }

    private boolean confirmed(PrintWriter out, RunOverview run) {
        out.printf("run %s: suite %s, models %s, created %s, %s answers stored%n", run.runId(),
                run.suite() == null ? "-" : run.suite(), run.models().isEmpty() ? "-" : String.join(", ", run.models()),
                RunsCommand.time(run.startedAt()), RunsCommand.answers(run));
        out.flush();
        String answer = prompt.ask("Delete run " + run.runId() + " and everything stored for it? [y/N] ");
        return answer != null && List.of("y", "yes").contains(answer.strip().toLowerCase(Locale.ROOT));
    }

    /** "3 answers, 6 scores in 2 scorings, 1 failed job, the events of 1 worker and its manifest", or what is left. */
    static String describe(RunDeletion removed) {
        if (removed.nothing()) {
            return "nothing was stored for it";
        }
        List<String> parts = new ArrayList<>();
        parts.add(Plural.of(removed.records(), "answer"));
        parts.add(Plural.of(removed.scores(), "score") + " in " + Plural.of(removed.scorings(), "scoring"));
        if (removed.failures() > 0) {
            parts.add(Plural.of(removed.failures(), "failed job"));
        }
        if (removed.workerEvents() > 0) {
            parts.add("the events of " + Plural.of(removed.workerEvents(), "worker"));
        }
        if (removed.noted()) {
            parts.add("its manifest");
        }
        return String.join(", ", parts);
    }
}
