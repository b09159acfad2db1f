package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code export} on a database a run wrote: the files it writes and the input it refuses. */
class InspectExportCommandTest {
    private static final String RUN = "0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path db;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @BeforeEach
    void storeARunScoredByExactMatch() {
        db = dir.resolve("r.db");
        List<Vignette> vignettes = List.of(new Vignette("q1", "2+2?", "4", Map.of("topic", "math")),
                new Vignette("q2", "Capital of France?", "Paris", Map.of("topic", "geo")));
        Job job = new Job(JobId.of(RUN + "-m-e0-0000"), new EvalSpec("s", vignettes, SpecParams.NONE.withModel("m")),
                RUN, 0);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            store.recordRun(new RunEntry(RUN, "evals/math.jsonl", List.of("m"), "exact", 1, 2, Instant.EPOCH));
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q1", "4"),
                    new ResponseRecord("q2", "Lyon"))), "w1");
        }
    }

    @Test
    void writesAnInspectLogPerModelInEitherFormAndTheListing() throws Exception {
        Path logs = dir.resolve("logs");

        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString()))
                .isZero();

        assertThat(out.toString()).isEqualTo("run " + RUN + ": wrote 1 file to " + logs + System.lineSeparator());
        Path log = logs.resolve("1970-01-01T00-00-00+00-00_math_" + RUN + "-m.json");
        JsonNode eval = JSON.readTree(log.toFile());
        assertThat(eval.get("eval").get("task").asText()).isEqualTo("math");
        assertThat(eval.get("results").get("scores").get(0).get("metrics").get("accuracy").get("value").asDouble())
                .isEqualTo(0.5);
        assertThat(eval.get("samples")).hasSize(2);
        assertThat(JSON.readTree(logs.resolve("listing.json").toFile()).has(log.getFileName().toString())).isTrue();

        out.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--log-format", "eval", "--out",
                logs.toString())).isZero();
        assertThat(logs.resolve("1970-01-01T00-00-00+00-00_math_" + RUN + "-m.eval")).isRegularFile();
        assertThat(JSON.readTree(logs.resolve("listing.json").toFile()).size()).as("both forms listed").isEqualTo(2);
    }

    @Test
    void refusesAFileAsTheFolderAMissingOrUnknownFormatOrLogFormatAndAnUnknownRun() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--out", file.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--out': " + file + " is a file, not a folder");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--out", dir.resolve("x").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--format=FORMAT'");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "promptfoo", "--out", dir.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--format'").contains("inspect");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--log-format", "zip", "--out",
                dir.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--log-format': 'zip' is not a log format:"
                + " json or eval");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--out", dir.resolve("y").toString(),
                "--run", "feedfacefeedface")).isEqualTo(2);
        assertThat(err.toString()).contains("holds no run 'feedfacefeedface'");
        assertThat(dir.resolve("y")).doesNotExist();
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}
