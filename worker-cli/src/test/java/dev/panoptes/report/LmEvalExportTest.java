package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.suite.RunManifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The lm-evaluation-harness export of {@link ReportFixtures}' run: layout, figures, hashes. */
class LmEvalExportTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Clock NOW = Clock.fixed(Instant.parse("2026-12-02T08:15:30.123456Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;

    @Test
    void writesAFolderPerModelWithLmEvalsFilesAndTheSummarysFigures() throws Exception {
        RunData run = ReportFixtures.run();
        RunStats stats = RunStats.of(run, null);

        List<LmEvalExport.Written> written = LmEvalExport.write(run, dir, NOW);

        assertThat(written).extracting(LmEvalExport.Written::model).containsExactly("m-a", "m-b", "m-c");
        LmEvalExport.Written a = written.get(0);
        String task = "capitals____sums_";
        assertThat(a.task()).isEqualTo(task);
        assertThat(a.results()).isEqualTo(dir.resolve("m-a").resolve("results_2025-05-01T10-00-00.json"));
        assertThat(a.samples()).isEqualTo(dir.resolve("m-a").resolve("samples_" + task + "_2025-05-01T10-00-00.jsonl"));

        JsonNode results = JSON.readTree(a.results().toFile());
        JsonNode figures = results.path("results").path(task);
        double acc = stats.model("m-a").orElseThrow().accuracy().mean();
        double se = stats.model("m-a").orElseThrow().accuracy().standardError();
        assertThat(figures.path("alias").asText()).isEqualTo(task);
        assertThat(figures.path("acc,none").asDouble()).isEqualTo(acc).isEqualTo(0.5);
        assertThat(figures.path("acc_stderr,none").asDouble()).isEqualTo(se).isCloseTo(0.2887, within(1e-4));
        assertThat(results.path("panoptes").path("stderr").asText()).startsWith("cluster-robust standard error")
                .contains("3 vignettes, 6 samples");
        assertThat(results.path("n-samples").path(task).path("original").asInt()).isEqualTo(3);
        assertThat(results.path("n-samples").path(task).path("effective").asInt()).as("one line per vignette")
                .isEqualTo(3);
        assertThat(results.path("configs").path(task).path("repeats").asInt()).isEqualTo(2);
        assertThat(results.path("configs").path(task).path("filter_list").get(0).path("filter").get(0)
                .path("function").asText()).isEqualTo("take_first_k");
        assertThat(results.path("configs").path(task).path("metric_list").get(0).path("metric").asText())
                .isEqualTo("acc");
        assertThat(results.path("versions").has(task)).isTrue();
        assertThat(results.path("higher_is_better").path(task).path("acc").asBoolean()).isTrue();
        assertThat(results.path("config").path("model_args").asText()).isEqualTo("model=m-a");
        assertThat(results.path("model_name").asText()).isEqualTo("m-a");
        assertThat(results.path("panoptes").path("run_id").asText()).isEqualTo(ReportFixtures.RUN);

        List<JsonNode> lines = lines(a.samples());
        assertThat(lines).hasSize(3).hasSize(a.sampleLines());
        assertThat(a.repeats()).isEqualTo(2);
        assertThat(lines).extracting(l -> l.path("doc_id").asInt()).containsExactly(0, 1, 2);
        assertThat(lines).extracting(l -> l.path("doc").path("id").asText()).containsExactly("v1", "v2", "v3");
        assertThat(lines).extracting(l -> l.path("acc").asDouble()).as("m-a: v1 1, 1; v2 1, 0; v3 0, 0")
                .containsExactly(1.0, 0.5, 0.0);
        JsonNode first = lines.get(0);
        assertThat(first.path("target").asText()).isEqualTo("Paris");
        assertThat(first.path("resps").toString()).isEqualTo("[[\"answer 0.0\",\"answer 0.1\"]]");
        assertThat(first.path("filtered_resps")).isEqualTo(first.path("resps"));
        assertThat(first.path("arguments").path("gen_args_0").path("arg_0").asText())
                .isEqualTo("user: What is the capital of France?");
        assertThat(first.path("filter").asText()).isEqualTo("none");
        assertThat(first.path("acc").asDouble()).isEqualTo(1.0);
        assertThat(first.path("panoptes").path("repeats")).extracting(r -> r.path("epoch").asInt())
                .containsExactly(0, 1);
        assertThat(first.path("prompt_hash").asText())
                .isEqualTo(LmEvalSamples.sha256("user: What is the capital of France?"));
        assertThat(first.path("target_hash").asText()).isEqualTo(LmEvalSamples.sha256("Paris"));
        double mean = lines.stream().mapToDouble(l -> l.path("acc").asDouble()).average().orElseThrow();
        assertThat(mean).isEqualTo(acc);

        StringBuilder hashes = new StringBuilder();
        lines.forEach(l -> hashes.append(l.path("doc_hash").asText()).append(l.path("prompt_hash").asText())
                .append(l.path("target_hash").asText()));
        assertThat(results.path("task_hashes").path(task).asText()).isEqualTo(LmEvalSamples.sha256(hashes.toString()));
    }

    @Test
    void aModelWithoutScoredSamplesHasNoFigureAndAnUndefinedStandardError() throws Exception {
        LmEvalExport.Written c = LmEvalExport.write(ReportFixtures.run(), dir, NOW).get(2);

        JsonNode figures = JSON.readTree(c.results().toFile()).path("results").path(c.task());
        assertThat(figures.path("acc,none").isNull()).isTrue();
        assertThat(figures.path("acc_stderr,none").asText()).isEqualTo("N/A");
        assertThat(lines(c.samples())).singleElement().satisfies(l -> assertThat(l.path("acc").isNull()).isTrue());
    }

    @Test
    void oneEpochGivesLmEvalsOwnStandardErrorAndTheRunsParametersAsGenerationKwargs() throws Exception {
        RunManifest manifest = new RunManifest(RunManifest.FORMAT, "1.2.3", "evals/arith.jsonl", "ab12", 4,
                List.of("m"), "Answer briefly.", 0.0, 64, 7L, 1, null, null, 2, "");
        RunInfo info = new RunInfo("run-1", "evals/arith.jsonl", List.of("m"), "exact", 1, null, 4, manifest,
                null, null, List.of());
        List<SampleRow> samples = new ArrayList<>();
        double[] scores = {1, 0, 1, 1};
        for (int v = 0; v < 4; v++) {
            samples.add(new SampleRow("run-1", "m", 0, "q" + v, "run-1-m-e0-000" + (3 - v) / 2, "p" + v, "e", "r",
                    scores[v], null, Map.of(), null, null, null, null, null, null));
        }
        LmEvalExport.Written w = LmEvalExport.write(new RunData(info, samples, null, null), dir, NOW).get(0);

        assertThat(w.results().getFileName().toString()).isEqualTo("results_2026-12-02T08-15-30.123456.json");
        JsonNode results = JSON.readTree(w.results().toFile());
        double s = Math.sqrt(0.75 * 0.25 * 4 / 3);
        assertThat(results.path("results").path("arith").path("acc_stderr,none").asDouble())
                .isCloseTo(s / 2, within(1e-12));
        assertThat(results.path("panoptes").path("stderr").asText()).contains("lm-eval's mean_stderr");
        JsonNode kwargs = results.path("configs").path("arith").path("generation_kwargs");
        assertThat(kwargs.path("temperature").asDouble()).isZero();
        assertThat(kwargs.path("max_gen_toks").asInt()).isEqualTo(64);
        assertThat(kwargs.path("seed").asLong()).isEqualTo(7);
        assertThat(results.path("n-shot").path("arith").asInt()).isZero();
        assertThat(results.path("system_instruction").asText()).isEqualTo("Answer briefly.");
        assertThat(results.path("system_instruction_sha").asText()).isEqualTo(LmEvalSamples.sha256("Answer briefly."));
        assertThat(lines(w.samples())).extracting(l -> l.path("doc").path("id").asText())
                .as("suite order, from the job indexes").containsExactly("q2", "q3", "q0", "q1");
        assertThat(lines(w.samples()).get(0).path("filtered_resps").toString()).as("lm-eval's take_first")
                .isEqualTo("[\"r\"]");
        assertThat(results.path("configs").path("arith").path("repeats").asInt()).isEqualTo(1);
    }

    @Test
    void docHashesAndLinesAreThoseOfPythonsJsonDumps() {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("a", List.of());
        metadata.put("b", Map.of());
        metadata.put("n", 3);
        metadata.put("x", 1.5);
        metadata.put("y", 1e-05);
        metadata.put("z", 1e16);
        metadata.put("t", true);
        metadata.put("l", List.of(1, "two"));
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("id", "q1");
        doc.put("prompt", "2+2?\nsay \"it\"\u0001 é ✓");
        doc.put("expected", null);
        doc.put("metadata", metadata);

        // python3 -c 'import json,hashlib; print(hashlib.sha256(json.dumps(doc, indent=2,
        //     ensure_ascii=False).encode()).hexdigest())' for the same doc
        assertThat(LmEvalSamples.sha256(PythonJson.dumps(doc)))
                .isEqualTo("39e0bd9fff5f3ca6845fa8b728c75f94af2c7a3e360c81640ddc9715d63f240c");
        assertThat(PythonJson.dumpsLine(Map.of("a", List.of(1, Map.of(), "é\u2028"))))
                .isEqualTo("{\"a\": [1, {}, \"é\u2028\"]}");
        assertThat(PythonJson.floatRepr(0.1)).isEqualTo("0.1");
        assertThat(PythonJson.floatRepr(123456789.0)).isEqualTo("123456789.0");
        assertThat(PythonJson.floatRepr(0.0001)).isEqualTo("0.0001");
        assertThat(PythonJson.floatRepr(-2.5e-7)).isEqualTo("-2.5e-07");
        assertThat(PythonJson.floatRepr(1.25e20)).isEqualTo("1.25e+20");
    }

    @Test
    void namesFoldersAndTasksAsLmEvalSanitizesThem() {
        assertThat(LmEvalExport.modelFolder("org/model:7b")).isEqualTo("org__model__7b");
        assertThat(LmEvalExport.modelFolder("..")).isEqualTo("_..");
        assertThat(LmEvalExport.modelFolder("")).isEqualTo("_");
        assertThat(LmEvalExport.taskName("evals/my-suite.v2.jsonl")).isEqualTo("my_suite_v2");
        assertThat(LmEvalExport.taskName(null)).isEqualTo("panoptes");
        assertThat(LmEvalExport.dateId(Instant.parse("2026-01-02T03:04:05Z"))).isEqualTo("2026-01-02T03-04-05");
    }

    private static List<JsonNode> lines(Path file) throws Exception {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            lines.add(JSON.readTree(line));
        }
        return lines;
    }
}
