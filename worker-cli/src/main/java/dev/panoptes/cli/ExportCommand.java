package dev.panoptes.cli;

import dev.panoptes.control.Plural;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.report.InspectLog;
import dev.panoptes.report.RunData;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar export --format FORMAT --out DIR [--db FILE|URL] [--run ID]}: writes
 * stored runs in the file layout another evaluation tool reads, so that results can be viewed and
 * shared there. Only the choice of writer lives here; each format's layout is its writer's
 * ({@code inspect}: {@link InspectLog}). The command's thread only.
 */
@Command(name = "export",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Writes the stored runs in another evaluation tool's format into a folder.",
            "inspect: Inspect AI eval logs (.json, or .eval with --log-format eval), one per run and model, with the"
                    + " folder's listing.json:"
                    + " open the folder with 'inspect view --log-dir DIR' or the Inspect log viewer."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:written", "1:the database could not be read or a file not written",
            "2:invalid command line, or no such run"})
final class ExportCommand extends StoredRunsCommand implements Callable<Integer> {
    /** The formats, by the name of the tool that reads them. */
    enum Format { inspect }

    @Option(names = "--format", order = 20, paramLabel = "FORMAT", required = true,
            description = "The format: ${COMPLETION-CANDIDATES}.")
    private Format format;

    @Option(names = "--out", order = 21, paramLabel = "DIR", required = true,
            description = "The folder to write into (created when missing; files of the same name are replaced).")
    private Path out;

    @Option(names = "--log-format", order = 22, paramLabel = "FORM", defaultValue = "json",
            converter = LogFormatConverter.class,
            description = "inspect only: json (one JSON document per log) or eval (Inspect's zip, which the viewer"
                    + " opens a sample at a time). Default: ${DEFAULT-VALUE}.")
    private InspectLog.LogFormat logFormat;

    @Option(names = "--scoring", order = 30, paramLabel = "N",
            description = "Export the scores of this scoring of each run (1 is the first; rescore adds more)."
                    + " Default: the latest.")
    private int scoring;

    @Override
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--out': " + out
                    + " is a file; give a folder (it is created when missing)");
        }
        List<RunData> runs;
        try (JdbcResultStore store = target.open()) {
            runs = ResultsCommand.load(spec, store, database.run, ScoringOption.check(spec, scoring));
        }
        List<Path> files = new ArrayList<>();
        for (RunData run : runs) {
            switch (format) {
                case inspect -> files.addAll(InspectLog.write(run, out, logFormat));
            }
        }
        PrintWriter stdout = spec.commandLine().getOut();
        stdout.printf("wrote %s of %s to %s%n", Plural.of(files.size(), "file"), Plural.of(runs.size(), "run"), out);
        stdout.flush();
        return 0;
    }
}
