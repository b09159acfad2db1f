package dev.panoptes.worker;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code java -jar worker.jar results --db FILE [--format jsonl|csv]}: exports stored records to stdout. */
@Command(name = "results",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = "Writes every stored record to standard output, one per line, oldest first.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:exported", "1:the database could not be read", "2:invalid command line"})
final class ResultsCommand implements Callable<Integer> {
    /** The export formats. */
    enum Format { jsonl, csv }

    static final String[] COLUMNS = {"jobId", "vignetteId", "response", "model", "finishReason", "latencyMs",
        "promptTokens", "completionTokens", "workerId", "storedAt"};

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Option(names = "--db", order = 10, paramLabel = "FILE", defaultValue = "panoptes.db",
            description = "The result database a coordinator wrote. Default: ${DEFAULT-VALUE}.")
    private Path db;

    @Option(names = "--format", order = 20, paramLabel = "FORMAT", defaultValue = "jsonl",
            description = "jsonl or csv. Default: ${DEFAULT-VALUE}.")
    private Format format;

    @Override
    public Integer call() {
        verbose.apply();
        if (!Files.isRegularFile(db)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--db': no such file: " + db
                    + " (a coordinator creates it; see 'coordinator --help')");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            if (format == Format.csv) {
                out.println(String.join(",", COLUMNS));
                store.forEachRecord(r -> out.println(csvLine(r)));
            } else {
                JsonFactory json = new JsonFactory();
                store.forEachRecord(r -> out.println(jsonLine(json, r)));
            }
        }
        out.flush();
        return 0;
    }

    static String jsonLine(JsonFactory json, StoredRecord stored) {
        ResponseRecord r = stored.record();
        java.io.StringWriter line = new java.io.StringWriter();
        try (JsonGenerator g = json.createGenerator(line)) {
            g.writeStartObject();
            g.writeStringField("jobId", stored.jobId().value());
            g.writeStringField("vignetteId", r.vignetteId());
            g.writeStringField("response", r.response());
            g.writeStringField("model", r.model());
            g.writeStringField("finishReason", r.finishReason());
            writeNumber(g, "latencyMs", r.latencyMs());
            writeNumber(g, "promptTokens", r.usage() == null ? null : r.usage().promptTokens());
            writeNumber(g, "completionTokens", r.usage() == null ? null : r.usage().completionTokens());
            g.writeStringField("workerId", stored.workerId());
            g.writeStringField("storedAt", stored.storedAt().toString());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return line.toString();
    }

    private static void writeNumber(JsonGenerator g, String name, Long value) throws IOException {
        if (value == null) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, value);
        }
    }

    static String csvLine(StoredRecord stored) {
        ResponseRecord r = stored.record();
        Object[] values = {stored.jobId().value(), r.vignetteId(), r.response(), r.model(), r.finishReason(),
            r.latencyMs(), r.usage() == null ? null : r.usage().promptTokens(),
            r.usage() == null ? null : r.usage().completionTokens(), stored.workerId(), stored.storedAt()};
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(csvField(values[i] == null ? "" : values[i].toString()));
        }
        return sb.toString();
    }

    /** RFC 4180: quote a field holding a comma, quote or line break, doubling its quotes. */
    static String csvField(String value) {
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }
}
