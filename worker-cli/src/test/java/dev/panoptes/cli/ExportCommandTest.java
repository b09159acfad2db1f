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
import dev.panoptes.report.Figures;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@code export --format lm-eval} on a database a run wrote: two models, three vignettes, two epochs. */
class ExportCommandTest {
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
                new Vignette("q2", "Capital of France?", "Paris", Map.of("topic", "geo")),
                new Vignette("q3", "3+3?", "6", Map.of()));
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            store.recordRun(new RunEntry(RUN, "evals/sums.jsonl", List.of("m", "org/n"), "exact", 2, 3,
                    Instant.parse("2026-12-01T10:00:00Z")));
            for (String model : List.of("m", "org/n")) {
                for (int epoch = 0; epoch < 2; epoch++) {
                    Job job = new Job(JobId.of(RUN + "-" + model.replace('/', '_') + "-e" + epoch + "-0000"),
                            new EvalSpec("s", vignettes, SpecParams.NONE.withModel(model)), RUN, epoch);
                    String third = model.equals("m") && epoch == 1 ? "7" : "6";
                    store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q1", "4"),
                            new ResponseRecord("q2", model.equals("m") ? "Paris" : "Lyon"),
                            new ResponseRecord("q3", third))), "w1");
                }
            }
        }
    }

    @Test
    void writesLmEvalFilesPerModelWithTheSummarysAccuracyAndALinePerVignetteWithItsEpochsAsRepeats() throws Exception {
        Path target = dir.resolve("lm-eval-out");

        assertThat(execute("export", "--db", db.toString(), "--format", "lm-eval", "--out", target.toString()))
                .isZero();

        RunStats stats;
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            stats = RunStats.of(RunDataLoader.load(store, RUN), null);
        }
        for (String model : List.of("m", "org/n")) {
            Path folder = target.resolve(model.replace("/", "__"));
            List<Path> files;
            try (Stream<Path> list = Files.list(folder)) {
                files = list.sorted().toList();
            }
            assertThat(files).extracting(p -> p.getFileName().toString())
                    .containsExactly("results_2026-12-01T10-00-00.json", "samples_sums_2026-12-01T10-00-00.jsonl");
            JsonNode results = JSON.readTree(files.get(0).toFile());
            assertThat(results.fieldNames()).toIterable().contains("results", "configs", "versions", "n-samples",
                    "config", "n-shot", "higher_is_better", "task_hashes", "model_name");
            double accuracy = stats.model(model).orElseThrow().accuracy().mean();
            assertThat(results.path("results").path("sums").path("acc,none").asDouble()).isEqualTo(accuracy);
            assertThat(results.path("results").path("sums").path("acc_stderr,none").isNumber()).isTrue();
            assertThat(results.path("configs").path("sums").path("dataset_path").asText())
                    .isEqualTo("evals/sums.jsonl");
            // lm-eval's layout for repeats: one line per document, its repeats in resps.
            assertThat(results.path("n-samples").path("sums").path("original").asInt()).isEqualTo(3);
            assertThat(results.path("n-samples").path("sums").path("effective").asInt()).isEqualTo(3);
            assertThat(results.path("configs").path("sums").path("repeats").asInt()).isEqualTo(2);
            assertThat(results.path("config").path("model_args").asText()).isEqualTo("model=" + model);

            List<String> lines = Files.readAllLines(files.get(1));
            assertThat(lines).as("one line per vignette").hasSize(3);
            Set<Integer> docIds = new HashSet<>();
            double sum = 0;
            for (String line : lines) {
                JsonNode sample = JSON.readTree(line);
                assertThat(sample.fieldNames()).toIterable().contains("doc_id", "doc", "target", "arguments",
                        "resps", "filtered_resps", "metrics", "acc", "doc_hash", "prompt_hash", "target_hash");
                assertThat(docIds.add(sample.path("doc_id").asInt())).as("doc_id %s once", sample.path("doc_id"))
                        .isTrue();
                assertThat(sample.path("arguments")).as("one request per document").hasSize(1);
                assertThat(sample.path("resps")).hasSize(1);
                assertThat(sample.path("resps").get(0)).as("the request's two repeats").hasSize(2);
                assertThat(sample.path("filtered_resps")).isEqualTo(sample.path("resps"));
                JsonNode repeats = sample.path("panoptes").path("repeats");
                assertThat(repeats).hasSize(2);
                double mean = 0;
                for (int i = 0; i < 2; i++) {
                    assertThat(repeats.get(i).path("epoch").asInt()).isEqualTo(i);
                    mean += repeats.get(i).path("score").asDouble() / 2;
                }
                assertThat(sample.path("acc").asDouble()).as("the mean over the repeats").isEqualTo(mean);
                sum += sample.path("acc").asDouble();
            }
            assertThat(results.path("results").path("sums").path("acc,none").asDouble())
                    .as("lm-eval's mean aggregation of the lines' acc").isCloseTo(sum / 3, within(1e-12));
            assertThat(out.toString()).contains("run " + RUN + ", " + model + ": wrote " + files.get(0)
                    + " and samples_sums_2026-12-01T10-00-00.jsonl (3 documents x 2 repeats, acc "
                    + Figures.ratio(accuracy) + ")");
        }
        assertThat(stats.model("m").orElseThrow().accuracy().mean()).isEqualTo(5.0 / 6);
        assertThat(stats.model("org/n").orElseThrow().accuracy().mean()).isEqualTo(4.0 / 6);
    }

    @Test
    void refusesAFileForOutAFormatItDoesNotKnowAndARunThatIsNotThere() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");

        assertThat(execute("export", "--db", db.toString(), "--format", "lm-eval", "--out", file.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--out': " + file + " is a file, not a folder");
        assertThat(Files.readString(file)).isEqualTo("x");

        err.getBuffer().setLength(0);
        Path under = file.resolve("sub");
        assertThat(execute("export", "--db", db.toString(), "--format", "lm-eval", "--out", under.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--out': cannot make the folder " + under);

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "helm", "--out", dir.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("'helm' is not a format; the formats are inspect, lm-eval");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--format", "lm-eval", "--out", dir.toString(),
                "--run", "nope")).isEqualTo(2);
        assertThat(err.toString()).contains("the database holds no run 'nope'");

        err.getBuffer().setLength(0);
        assertThat(execute("export", "--db", db.toString(), "--out", dir.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--format=FORMAT'");
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}
