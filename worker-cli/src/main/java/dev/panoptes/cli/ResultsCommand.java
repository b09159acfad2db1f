package dev.panoptes.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.cost.Money;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.report.CsvWriter.Cell;
import dev.panoptes.report.CsvWriter;
import dev.panoptes.report.RunCardJson;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.SampleRow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar results --db FILE|URL [--run ID] [--format jsonl|csv]}: exports the
 * stored answers, one per line, with everything needed to recompute the summary: run, model,
 * epoch, prompt, expected answer, answer, score (and the number of the scoring it comes from),
 * metadata; an answer served from the response cache is marked {@code cached} with the run whose
 * answer it copies ({@code cachedFrom}): fields of its JSONL line, and CSV columns ({@code false} and
 * empty for the others). Given {@code --price} or {@code --prices}, each answer also carries its cost
 * in USD ({@link #COST_COLUMN}, from {@link RunCosts#answerUsd}), which over a run adds up to the
 * cost its summary prints. The CSV header is always {@link #CSV_HEADER}, whatever the data holds. The rows are
 * those the summary and the report are computed from ({@link RunDataLoader}).
 */
@Command(name = "results",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Writes every stored answer to standard output, one per line (JSONL) or row (CSV), run by run,"
                + " oldest first within a run.",
            "CSV cells that a spreadsheet would run as a formula (starting with =, +, -, @, tab or carriage"
                    + " return) are written with a leading ' so that they stay text; a cell that is a plain number"
                    + " (-24, +1, -3.5, 1e-3) is a number and is written as it is.",
            "An answer served from the response cache (no model call) carries \"cached\": true and \"cachedFrom\","
                    + " the run that answered it (in CSV: false and empty for the other answers).",
            "Given --price or --prices, each answer carries costUsd, its tokens at its model's price (0 when the"
                    + " cache served it, empty without a price for its model; the last CSV column): over a run they"
                    + " add up to the cost the run's summary prints.",
            "The CSV header is the same for every export (cached, cachedFrom and costUsd included, empty where an"
                    + " answer has no value), so that two exports concatenate."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:exported", "1:the database could not be read", "2:invalid command line, or no such run"})
public final class ResultsCommand extends StoredRunsCommand implements Callable<Integer> {
    /** The export formats. */
    enum Format { jsonl, csv }

    public static final List<String> COLUMNS = List.of("runId", "model", "epoch", "jobId", "vignetteId", "prompt",
            "expected", "response", "score", "explanation", "metadata", "apiModel", "finishReason", "latencyMs",
            "promptTokens", "completionTokens", "workerId", "error", "scoring");
    /**
     * The columns that mark answers served from the response cache, after {@link #COLUMNS} in a CSV
     * export that holds any (a JSONL line carries them as fields when its answer is one).
     */
    public static final List<String> CACHE_COLUMNS = List.of("cached", "cachedFrom");
    /**
     * The column (and JSONL field) of each answer's cost in USD when prices are given: last in a
     * CSV row, empty (null) for a model without a price, 0 for an answer the cache served.
     */
    public static final String COST_COLUMN = "costUsd";
    /**
     * The CSV header, the same for every export: {@link #COLUMNS}, {@link #CACHE_COLUMNS} and
     * {@link #COST_COLUMN}, with empty cells where an answer has no value (no cache source, no price).
     */
    public static final List<String> CSV_HEADER = csvHeader();

    private static List<String> csvHeader() {
        List<String> header = new ArrayList<>(COLUMNS);
        header.addAll(CACHE_COLUMNS);
        header.add(COST_COLUMN);
        return List.copyOf(header);
    }
    /**
     * Jackson's mapper, built on first use rather than with this class: building it loads much of
     * Jackson (~150 ms of CPU), and this class is loaded by paths that never write JSON (the
     * whole command tree, {@code --help}, the commands that read runs through {@link #load}).
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    @Option(names = "--format", order = 20, paramLabel = "FORMAT", defaultValue = "jsonl",
            description = "jsonl or csv. Default: ${DEFAULT-VALUE}.")
    private Format format;

    @Option(names = "--scoring", order = 30, paramLabel = "N",
            description = "Export the scores of this scoring of each run (1 is the first; rescore adds more)."
                    + " Default: the latest.")
    private int scoring;

    @Option(names = "--manifest", order = 31, paramLabel = "FILE",
            description = "Also write the record of each exported run (every parameter it recorded, its times,"
                    + " the scoring shown; null for what it did not record) to this JSON file.")
    private Path manifest;

    @Mixin
    private PriceOptions prices;

    @Override
    public Integer call() throws IOException {
        DatabaseTarget target = existingDatabase();
        Prices pricing = prices.prices(spec);
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcResultStore store = target.open()) {
            List<RunData> runs = load(spec, store, database.run, ScoringOption.check(spec, scoring));
            if (manifest != null) {
                Files.writeString(manifest, RunCardJson.of(runs), StandardCharsets.UTF_8);
            }
            if (format == Format.csv) {
                CsvWriter csv = new CsvWriter(out);
                // One header whatever the data holds, so that exports of any runs concatenate.
                csv.writeRow(CSV_HEADER);
                for (RunData data : runs) {
                    for (SampleRow s : data.samples()) {
                        List<Cell> cells = csvCells(s, data.scoring());
                        cells.add(Cell.text(Boolean.toString(s.cached())));
                        cells.add(Cell.text(s.cachedFrom()));
                        Double cost = pricing.isEmpty() ? null : RunCosts.answerUsd(s, pricing);
                        cells.add(Cell.number(cost == null ? null : Money.plain(cost)));
                        csv.writeCells(cells);
                    }
                }
                csv.flush();
            } else {
                JsonFactory json = new JsonFactory();
                for (RunData data : runs) {
                    for (SampleRow s : data.samples()) {
                        out.println(jsonLine(json, s, data.scoring(), pricing));
                    }
                }
            }
        }
        out.flush();
        return 0;
    }

    /** Every run of the store, or the one named, with its latest scoring. @throws ParameterException when it holds no such run */
    static List<RunData> load(CommandSpec spec, JdbcResultStore store, String runId) {
        return load(spec, store, runId, 0);
    }

    /**
     * Every run of the store, or the one named, with the scores of scoring {@code scoring} (0: the
     * latest).
     *
     * @param runId a run id or its first 8 or more characters ({@link RunSelector}); null for every run
     * @throws ParameterException when it holds no such run, or a run has no such scoring
     */
    static List<RunData> load(CommandSpec spec, JdbcResultStore store, String runId, int scoring) {
        List<String> ids = RunDataLoader.runIds(store);
        List<String> shown = runId == null ? ids : List.of(RunSelector.resolve(spec, ids, runId, "the database"));
        List<RunData> runs = new ArrayList<>();
        for (String id : shown) {
            runs.add(ScoringOption.load(spec, store, id, scoring, runId == null ? " (name a run with --run)" : ""));
        }
        return runs;
    }

    /** The CSV cells of an answer with the number of the scoring its score comes from (empty when none). */
    static List<Cell> csvCells(SampleRow s, Scoring scoring) {
        List<Cell> cells = new ArrayList<>(csvCells(s));
        cells.add(Cell.number(scoring == null ? null : (long) scoring.number()));
        return cells;
    }

    static List<Cell> csvCells(SampleRow s) {
        return List.of(Cell.text(s.runId()), Cell.text(s.model()), Cell.number((long) s.epoch()), Cell.text(s.jobId()),
                Cell.text(s.vignetteId()), Cell.text(s.prompt()), Cell.text(s.expected()), Cell.text(s.response()),
                Cell.number(s.score() == null ? null : s.score().toString()), Cell.text(s.explanation()),
                Cell.text(s.metadata().isEmpty() ? null : metadataJson(s)), Cell.text(s.apiModel()),
                Cell.text(s.finishReason()), Cell.number(s.latencyMs()), Cell.number(s.promptTokens()),
                Cell.number(s.completionTokens()), Cell.text(s.workerId()), Cell.text(s.error()));
    }

    /** The JSON line of an answer with the number of the scoring its score comes from (null when none). */
    static String jsonLine(JsonFactory json, SampleRow s, Scoring scoring) {
        return jsonLine(json, s, scoring, true, Prices.NONE);
    }

    /** As {@link #jsonLine(JsonFactory, SampleRow, Scoring)}, with the answer's cost given prices. */
    static String jsonLine(JsonFactory json, SampleRow s, Scoring scoring, Prices prices) {
        return jsonLine(json, s, scoring, true, prices);
    }

    static String jsonLine(JsonFactory json, SampleRow s) {
        return jsonLine(json, s, null, false, Prices.NONE);
    }

    private static String jsonLine(JsonFactory json, SampleRow s, Scoring scoring, boolean withScoring,
                                   Prices prices) {
        java.io.StringWriter line = new java.io.StringWriter();
        try (JsonGenerator g = json.createGenerator(line)) {
            g.setCodec(Json.MAPPER);
            g.writeStartObject();
            g.writeStringField("runId", s.runId());
            g.writeStringField("model", s.model());
            g.writeNumberField("epoch", s.epoch());
            g.writeStringField("jobId", s.jobId());
            g.writeStringField("vignetteId", s.vignetteId());
            g.writeStringField("prompt", s.prompt());
            g.writeStringField("expected", s.expected());
            g.writeStringField("response", s.response());
            if (s.score() == null) {
                g.writeNullField("score");
            } else {
                g.writeNumberField("score", s.score());
            }
            g.writeStringField("explanation", s.explanation());
            g.writeObjectField("metadata", s.metadata());
            g.writeStringField("apiModel", s.apiModel());
            g.writeStringField("finishReason", s.finishReason());
            writeNumber(g, "latencyMs", s.latencyMs());
            writeNumber(g, "promptTokens", s.promptTokens());
            writeNumber(g, "completionTokens", s.completionTokens());
            g.writeStringField("workerId", s.workerId());
            g.writeStringField("error", s.error());
            if (withScoring) {
                writeNumber(g, "scoring", scoring == null ? null : (long) scoring.number());
                if (s.cached()) {
                    g.writeBooleanField("cached", true);
                    g.writeStringField("cachedFrom", s.cachedFrom());
                }
            }
            if (!prices.isEmpty()) {
                Double cost = RunCosts.answerUsd(s, prices);
                if (cost == null) {
                    g.writeNullField(COST_COLUMN);
                } else {
                    // A decimal written as such: 0.0000021, not the double's 2.1000000000000002E-6.
                    g.writeFieldName(COST_COLUMN);
                    g.writeNumber(Money.plain(cost));
                }
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return line.toString();
    }

    private static String metadataJson(SampleRow s) {
        try {
            return Json.MAPPER.writeValueAsString(s.metadata());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeNumber(JsonGenerator g, String name, Long value) throws IOException {
        if (value == null) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, value);
        }
    }
}
