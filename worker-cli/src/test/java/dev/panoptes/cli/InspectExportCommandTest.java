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
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@code export} on a database a run wrote: the files it writes and the input it refuses. */
class InspectExportCommandTest {
    private static final String RUN = "0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ZERO, 8);

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
        assertThat(eval.get("samples").get(0).get("epoch").asInt()).as("the run's epoch 0 is Inspect's epoch 1")
                .isEqualTo(1);
        assertThat(JSON.readTree(logs.resolve("listing.json").toFile()).has(log.getFileName().toString())).isTrue();

        out.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "inspect", "--log-format", "eval", "--out",
                logs.toString())).isZero();
        assertThat(logs.resolve("1970-01-01T00-00-00+00-00_math_" + RUN + "-m.eval")).isRegularFile();
        assertThat(JSON.readTree(logs.resolve("listing.json").toFile()).size()).as("both forms listed").isEqualTo(2);
    }

    /**
     * A run of three epochs, exported and read back as Inspect reads a log (its {@code EvalLog}
     * schema): epochs numbered from 1 to the config's {@code epochs}, one sample per vignette and
     * epoch, each {@code .eval} sample member named {@code samples/<id>_epoch_<epoch>.json} as
     * {@code read_eval_sample(id, epoch)} looks it up, and the reductions (one mean per vignette)
     * agreeing with the samples and the accuracy.
     */
    @Test
    void aRunOfThreeEpochsIsReadBackWithEpochsFromOneAndItsReductions() throws Exception {
        Path evalDb = dir.resolve("epochs.db");
        Path suite = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();
        assertThat(execute("eval", "--suite", suite.toString(), "--db", evalDb.toString(), "--model",
                StubModelServer.MODEL, "--model-api", stub.baseUrl().toString(), "--epochs", "3", "--limit", "4",
                "--no-progress")).as("eval; its console:%n%s", err).isZero();
        Path logs = dir.resolve("logs");
        assertThat(execute("export", "--db", evalDb.toString(), "--format", "inspect", "--out", logs.toString()))
                .isZero();
        assertThat(execute("export", "--db", evalDb.toString(), "--format", "inspect", "--log-format", "eval",
                "--out", logs.toString())).isZero();
        Path json;
        Path zip;
        try (Stream<Path> files = Files.list(logs)) {
            List<Path> all = files.sorted().toList();
            json = all.stream().filter(p -> p.toString().endsWith(".json") && !p.endsWith("listing.json"))
                    .findFirst().orElseThrow();
            zip = all.stream().filter(p -> p.toString().endsWith(".eval")).findFirst().orElseThrow();
        }

        JsonNode log = JSON.readTree(json.toFile());
        int epochs = log.get("eval").get("config").get("epochs").asInt();
        assertThat(epochs).isEqualTo(3);
        JsonNode samples = log.get("samples");
        assertThat(samples).hasSize(4 * 3);
        Set<String> keys = new HashSet<>();
        Map<String, List<Double>> scores = new HashMap<>();
        for (JsonNode sample : samples) {
            int epoch = sample.get("epoch").asInt();
            assertThat(epoch).as("EvalSample.epoch of %s", sample.get("id")).isBetween(1, epochs);
            assertThat(keys.add(sample.get("id").asText() + "/" + epoch)).as("one sample per id and epoch").isTrue();
            scores.computeIfAbsent(sample.get("id").asText(), id -> new ArrayList<>())
                    .add(sample.get("scores").get("exact").get("value").asDouble());
        }
        assertThat(keys).contains("math-001/1", "math-001/2", "math-001/3").doesNotContain("math-001/0");
        JsonNode score = log.get("results").get("scores").get(0);
        assertThat(log.get("results").get("total_samples").asInt()).as("dataset samples x epochs").isEqualTo(12);
        assertThat(score.get("reducer").asText()).isEqualTo(log.get("eval").get("config").get("epochs_reducer")
                .get(0).asText()).isEqualTo("mean");
        JsonNode reductions = log.get("reductions");
        assertThat(reductions).hasSize(1);
        assertThat(reductions.get(0).get("scorer").asText()).isEqualTo("exact");
        assertThat(reductions.get(0).get("reducer").asText()).isEqualTo("mean");
        JsonNode reduced = reductions.get(0).get("samples");
        assertThat(reduced).hasSize(4);
        double sum = 0;
        for (JsonNode each : reduced) {
            List<Double> values = scores.get(each.get("sample_id").asText());
            assertThat(values).hasSize(3);
            double mean = values.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
            assertThat(each.get("value").asDouble()).isCloseTo(mean, within(1e-12));
            sum += each.get("value").asDouble();
        }
        assertThat(score.get("metrics").get("accuracy").get("value").asDouble())
                .as("accuracy: the mean of the reduced scores").isCloseTo(sum / 4, within(1e-12));

        try (ZipFile file = new ZipFile(zip.toFile())) {
            JsonNode header = JSON.readTree(file.getInputStream(file.getEntry("header.json")));
            assertThat(header.has("samples")).isFalse();
            assertThat(header.has("reductions")).as("kept in reductions.json, as Inspect keeps them").isFalse();
            assertThat(header.get("eval").get("config").get("epochs").asInt()).isEqualTo(3);
            assertThat(JSON.readTree(file.getInputStream(file.getEntry("reductions.json"))))
                    .isEqualTo(reductions);
            JsonNode summaries = JSON.readTree(file.getInputStream(file.getEntry("summaries.json")));
            assertThat(summaries).hasSize(12);
            for (JsonNode summary : summaries) {
                String member = "samples/" + summary.get("id").asText() + "_epoch_" + summary.get("epoch").asInt()
                        + ".json";
                ZipEntry entry = file.getEntry(member);
                assertThat(entry).as("the member read_eval_sample reads for a summary: %s", member).isNotNull();
                JsonNode sample = JSON.readTree(file.getInputStream(entry));
                assertThat(sample.get("epoch")).isEqualTo(summary.get("epoch"));
                assertThat(sample.get("id")).isEqualTo(summary.get("id"));
            }
            assertThat(file.getEntry("samples/math-001_epoch_0.json")).isNull();
        }
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
