package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunLocks;
import dev.panoptes.report.Figures;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunOverview;
import dev.panoptes.report.RunStats;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar runs --db FILE|URL}: the runs a result database holds, one line
 * each (id, suite, models, when created, state, answers stored of expected, accuracy per model),
 * most recently started first; {@code runs show ID} and {@code runs delete ID} are its
 * subcommands. The figures are {@link RunOverview}'s, from the same rows as the summary and the
 * report; a run is running when a coordinator holds its lock ({@link RunLocks}).
 */
@Command(name = "runs",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Lists the runs of a result database, most recently created first: id, suite (with the subset"
                + " of it the run asks, if any), models, when it"
                + " was created, its state (complete, incomplete, or running when a coordinator holds it now), the"
                + " answers stored of those it asks for, and the accuracy per model (the mean score of its latest"
                + " scoring).",
            "'runs show ID' prints a run's manifest and summary; 'runs delete ID' removes it."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:listed", "1:the database could not be read", "2:invalid command line, or no such run"})
final class RunsCommand extends StoredRunsCommand implements Callable<Integer> {
    /** The columns, in order. */
    static final List<String> HEADER = List.of("RUN", "SUITE", "MODELS", "CREATED", "STATE", "ANSWERS", "ACCURACY");

    /** The command with its subcommands, ready to add to {@code worker.jar}'s; {@code prompt} asks before deleting. */
    static CommandLine commandLine(Prompt prompt) {
        CommandLine runs = new CommandLine(new RunsCommand());
        runs.addSubcommand(StoredRunCommand.withoutRunOption(new CommandLine(new RunsShowCommand())));
        runs.addSubcommand(StoredRunCommand.withoutRunOption(new CommandLine(new RunsDeleteCommand(prompt))));
        return runs;
    }

    @Override
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        PrintWriter out = spec.commandLine().getOut();
        List<List<String>> rows = new ArrayList<>();
        try (JdbcResultStore store = target.open()) {
            List<String> ids = RunDataLoader.runIds(store);
            if (database.run != null) {
                ids = List.of(RunSelector.resolve(spec, ids, database.run, "the database"));
            }
            Set<String> running = RunLocks.running(target, store.runs());
            for (String id : ids) {
                // Streamed from the store, one run at a time: no run's answers are held.
                RunStats stats = RunDataLoader.stats(store, id, 0, null, null);
                RunManifest manifest = stats.info().manifest();
                rows.add(row(RunOverview.of(stats), manifest == null || manifest.subset() == null ? null
                        : manifest.subset().describe(), running.contains(id)));
            }
        }
        if (rows.isEmpty()) {
            out.println(target + " holds no run");
        } else {
            rows.add(0, HEADER);
            printTable(out, rows);
        }
        out.flush();
        return 0;
    }

    /** A run's cells, in {@link #HEADER}'s order. */
    static List<String> row(RunOverview run, boolean running) {
        return row(run, null, running);
    }

    /**
     * A run's cells, in {@link #HEADER}'s order, its suite followed by the subset it asks
     * ({@code evals/math.jsonl [shuffled (seed 7), first 5]}) when it asks one.
     */
    static List<String> row(RunOverview run, String subset, boolean running) {
        List<String> accuracy = new ArrayList<>();
        run.accuracy().forEach((model, estimate) -> accuracy.add(model + " " + Figures.ratio(estimate.mean())));
        return List.of(run.runId(), (run.suite() == null ? "-" : run.suite()) + (subset == null ? ""
                        : " [" + subset + "]"),
                run.models().isEmpty() ? "-" : String.join(",", run.models()), time(run.startedAt()),
                run.stateLabel(running), answers(run), accuracy.isEmpty() ? "-" : String.join(", ", accuracy));
    }

    /** "30/40", or "30/?" when the run never noted how many it asks for. */
    static String answers(RunOverview run) {
        return run.stored() + "/" + (run.expected() < 0 ? "?" : Long.toString(run.expected()));
    }

    /** To the second, as ISO-8601; "-" when unknown. */
    static String time(Instant instant) {
        return instant == null ? "-" : instant.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** Left-aligned columns, two spaces apart; the last column is not padded. */
    private static void printTable(PrintWriter out, List<List<String>> rows) {
        int columns = rows.get(0).size();
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int i = 0; i < columns; i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                line.append(i == columns - 1 ? row.get(i) : String.format("%-" + widths[i] + "s  ", row.get(i)));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
