package dev.panoptes.cli;

import dev.panoptes.control.Usage;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunStop;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunLocks;
import dev.panoptes.coordinator.RunSummary;
import dev.panoptes.report.NotStored;
import dev.panoptes.report.RunCard;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunInfo;
import dev.panoptes.report.RunOverview;
import dev.panoptes.report.RunStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar runs show ID --db FILE|URL}: one run's manifest (every parameter it
 * recorded, as the report's run card shows them: {@link RunCard}) and its summary from what is
 * stored: state, answers, failed jobs, tokens (and those spent on answers never stored, over every
 * sitting: {@link NotStored}), and the accuracy lines the coordinator's summary
 * prints ({@link RunSummary#renderAccuracy}, over {@link RunStats}).
 */
@Command(name = "show",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = "Prints a run's manifest (every parameter it recorded) and its summary: state, answers stored,"
                + " failed jobs, tokens and the accuracy per model with its 95%% interval, as the coordinator's summary"
                + " shows them.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:shown", "1:the database could not be read", "2:invalid command line, or no such run"})
final class RunsShowCommand extends StoredRunCommand implements Callable<Integer> {
    @Option(names = "--group-by", order = 30, paramLabel = "KEY",
            description = "Also break the accuracy down by this metadata key. Default: the key the run was made"
                    + " with (its --group-by), if any.")
    private String groupBy;

    @Override
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcResultStore store = target.open()) {
            String runId = runId(store);
            // Streamed from the store: the figures of a run of a million answers, without holding them.
            RunStats stats = RunDataLoader.stats(store, runId, 0, groupBy, null);
            boolean running = RunLocks.running(target, store.runs()).contains(runId);
            out.print(render(stats, running));
        }
        out.flush();
        return 0;
    }

    /** The manifest and the summary of a run, as printed. */
    static String render(RunData data, boolean running, String groupBy) {
        return render(RunStats.of(data, RunStats.groupByOf(data, groupBy)), running);
    }

    /** The manifest and the summary of a run, from its statistics, as printed. */
    static String render(RunStats stats, boolean running) {
        RunInfo info = stats.info();
        RunOverview overview = RunOverview.of(stats);
        StringBuilder sb = new StringBuilder();
        sb.append("Run ").append(info.runId()).append(": ").append(overview.state(running).label())
                .append('\n');
        RunStop stop = running ? null : info.stop();
        if (stop != null) {
            // Kept with the sitting that stopped: the exit code of that command is long gone.
            sb.append(RunStop.BUDGET.equals(stop.cause()) ? "Stopped by its budget: " : "Failed a gate: ")
                    .append(stop.reason()).append('\n');
        }
        sb.append("Manifest:\n");
        List<RunCard.Entry> card = RunCard.of(info);
        int width = card.stream().mapToInt(e -> e.label().length()).max().orElse(0) + 1;
        for (RunCard.Entry e : card) {
            sb.append(String.format(Locale.ROOT, "  %-" + width + "s %s%n", e.label() + ":", e.shown()));
        }
        sb.append("Summary:\n");
        long missing = overview.expected() < 0 ? 0 : Math.max(0, overview.expected() - overview.stored());
        int failedAnswers = stats.models().stream().mapToInt(RunStats.ModelStats::failedAnswers).sum();
        sb.append(String.format(Locale.ROOT, "  answers:     %s stored%s%s%n", overview.expected() < 0
                        ? Long.toString(overview.stored()) : overview.stored() + " of " + overview.expected(),
                failedAnswers == 0 ? "" : " (" + failedAnswers + " of them failed)",
                missing == 0 ? "" : ", " + missing + " missing"));
        sb.append(String.format(Locale.ROOT, "  failed jobs: %d%n", overview.failedJobs()));
        long prompt = stats.models().stream().mapToLong(RunStats.ModelStats::promptTokens).sum();
        long completion = stats.models().stream().mapToLong(RunStats.ModelStats::completionTokens).sum();
        RunSummary.renderTokens(sb, new Usage(prompt, completion), stats);
        // Kept with each sitting: tokens paid for that no stored answer shows, so not in the line above.
        sb.append(NotStored.of(info, Prices.NONE).line());
        RunSummary.renderAccuracy(sb, stats);
        return sb.toString();
    }
}
