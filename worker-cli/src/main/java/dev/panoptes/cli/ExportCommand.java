package dev.panoptes.cli;

import dev.panoptes.control.Plural;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.report.Figures;
import dev.panoptes.report.InspectLog;
import dev.panoptes.report.LmEvalExport;
import dev.panoptes.report.RunData;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar export --format FORMAT --out DIR [--db FILE|URL] [--run ID]}: writes
 * stored runs in another tool's format, so that what people already view and share results with
 * reads Panoptes' runs. Each format is one writer of {@code dev.panoptes.report} ({@link InspectLog},
 * {@link LmEvalExport}), listed in {@link #FORMATS}; the command only resolves the runs and the
 * folder. The command's thread only.
 */
@Command(name = "export",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Writes the runs of a result database in another tool's format, into a folder.",
            "inspect: Inspect AI eval logs (.json, or .eval with --log-format eval), one per run and model, with the"
                    + " folder's listing.json: open the folder with 'inspect view --log-dir DIR' or the Inspect log"
                    + " viewer.",
            "lm-eval: lm-evaluation-harness's results_<date>.json and samples_<task>_<date>.jsonl, in one folder"
                    + " per model (as lm_eval --output_path writes them); the accuracy and its standard error are"
                    + " the summary's."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:written", "1:the database could not be read or a file not written",
            "2:invalid command line, no such run, or --out is not a folder"})
final class ExportCommand extends StoredRunsCommand implements Callable<Integer> {
    /** Writes one run into a folder and says what it wrote, one line per file set. */
    @FunctionalInterface
    interface Exporter {
        List<String> export(ExportCommand command, RunData run, Path dir) throws IOException;
    }

    /** The formats by name, in the order --help lists them. */
    static final Map<String, Exporter> FORMATS = new LinkedHashMap<>();

    static {
        FORMATS.put("inspect", ExportCommand::inspect);
        FORMATS.put("lm-eval", (command, run, dir) -> lmEval(run, dir));
    }

    @Option(names = "--format", order = 20, required = true, paramLabel = "FORMAT", completionCandidates = Names.class,
            description = "The format: ${COMPLETION-CANDIDATES}.")
    private String format;

    @Option(names = "--out", order = 21, required = true, paramLabel = "DIR",
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
        Exporter exporter = FORMATS.get(format);
        if (exporter == null) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--format': '" + format
                    + "' is not a format; the formats are " + String.join(", ", FORMATS.keySet()));
        }
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--out': " + out
                    + " is a file, not a folder; name a folder (it is created when missing)");
        }
        List<RunData> runs;
        try (JdbcResultStore store = target.open()) {
            runs = ResultsCommand.load(spec, store, database.run, ScoringOption.check(spec, scoring));
        }
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--out': cannot make the folder "
                    + out + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
        }
        PrintWriter console = spec.commandLine().getOut();
        for (RunData run : runs) {
            for (String line : exporter.export(this, run, out)) {
                console.println(line);
            }
        }
        console.flush();
        return 0;
    }

    private static List<String> inspect(ExportCommand command, RunData run, Path dir) throws IOException {
        List<Path> files = InspectLog.write(run, dir, command.logFormat);
        return List.of("run " + run.info().runId() + ": wrote " + Plural.of(files.size(), "file") + " to " + dir);
    }

    private static List<String> lmEval(RunData run, Path dir) throws IOException {
        return LmEvalExport.write(run, dir).stream().map(w -> "run " + run.info().runId() + ", " + w.model()
                + ": wrote " + w.results() + " and " + w.samples().getFileName() + " ("
                + Plural.of(w.sampleLines(), "document") + (w.repeats() > 1 ? " x " + w.repeats() + " repeats" : "")
                + ", acc " + Figures.ratio(w.accuracy().mean()) + ")").toList();
    }

    /** The format names, for --help and shell completion. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return FORMATS.keySet().iterator();
        }
    }
}
