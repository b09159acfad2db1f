package dev.panoptes.cli;

import dev.panoptes.control.Plural;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.report.HtmlReport;
import dev.panoptes.report.RunData;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar report --db FILE --out FILE}: one self-contained HTML file (data and
 * scripts inline; no server, no network) with, per run, accuracy per model with confidence
 * intervals, the comparison of models, the per-group breakdown, per-worker counts, token totals,
 * failures and a searchable table of samples; given {@code --price} or {@code --prices}, the cost
 * per model and in all. Its figures are the summary's and the export's.
 */
@Command(name = "report",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = "Writes an HTML report of the runs in a result database: one self-contained file to open in"
                + " any browser (no server, nothing fetched from the network). Given --price or --prices, it shows"
                + " each run's cost per model and in all, as the run's summary does.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:written", "1:the database could not be read or the file not written",
            "2:invalid command line, or no such run"})
final class ReportCommand extends StoredRunsCommand implements Callable<Integer> {
    @Option(names = "--out", order = 20, paramLabel = "FILE", defaultValue = "panoptes-report.html",
            description = "The HTML file to write (replaced if it exists). Default: ${DEFAULT-VALUE}.")
    private Path outFile;

    @Option(names = "--scoring", order = 30, paramLabel = "N",
            description = "Show the scores of this scoring of each run (1 is the first; rescore adds more)."
                    + " Default: the latest.")
    private int scoring;

    @Option(names = "--group-by", order = 40, paramLabel = "KEY",
            description = "Also break accuracy down by this metadata key. Default: the key each run was made with"
                    + " (its --group-by), if any.")
    private String groupBy;

    @Mixin
    private PriceOptions prices;

    @Override
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        Prices pricing = prices.prices(spec);
        Path parent = outFile.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--out': the folder " + parent
                    + " does not exist");
        }
        List<RunData> runs;
        try (JdbcResultStore store = target.open()) {
            runs = ResultsCommand.load(spec, store, database.run, ScoringOption.check(spec, scoring));
        }
        HtmlReport.write(runs, outFile, groupBy, pricing);
        PrintWriter out = spec.commandLine().getOut();
        int samples = runs.stream().mapToInt(r -> r.samples().size()).sum();
        out.printf("wrote %s: %s, %s, %s; open it in a browser: %s%n", outFile, Plural.of(runs.size(), "run"),
                Plural.of(samples, "answer"), Plural.grouped(Files.size(outFile), "byte"),
                outFile.toAbsolutePath().toUri());
        out.flush();
        return 0;
    }
}
