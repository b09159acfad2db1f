package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.suite.RunManifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The Inspect eval logs of the report fixture: their fields, figures and listing. */
class InspectLogTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void writesOneLogPerModelWithRunStatsFiguresAndOneSamplePerVignetteAndEpoch() throws Exception {
        RunData run = withManifest(ReportFixtures.run());
        RunStats stats = RunStats.of(run, null);

        List<Path> files = InspectLog.write(run, dir.resolve("logs"));

        assertThat(files).extracting(f -> f.getFileName().toString()).containsExactly(
                "2025-05-01T10-00-00+00-00_capitals-sums-_r-1-m-a.json",
                "2025-05-01T10-00-00+00-00_capitals-sums-_r-1-m-b.json",
                "2025-05-01T10-00-00+00-00_capitals-sums-_r-1-m-c.json");
        JsonNode log = JSON.readTree(files.get(0).toFile());
        assertThat(log.get("version").asInt()).isEqualTo(2);
        assertThat(log.get("status").asText()).isEqualTo("success");
        JsonNode spec = log.get("eval");
        assertThat(spec.get("task").asText()).isEqualTo("capitals & <sums>");
        assertThat(spec.get("model").asText()).isEqualTo("m-a");
        assertThat(spec.get("run_id").asText()).isEqualTo("r-1");
        assertThat(spec.get("created").asText()).isEqualTo("2025-05-01T10:00:00+00:00");
        assertThat(spec.get("dataset").get("samples").asInt()).isEqualTo(3);
        assertThat(spec.get("config").get("epochs").asInt()).isEqualTo(2);
        assertThat(spec.get("model_generate_config").get("temperature").asDouble()).isEqualTo(0.0);
        assertThat(spec.get("model_generate_config").get("max_tokens").asInt()).isEqualTo(64);
        assertThat(spec.get("model_generate_config").get("system_message").asText()).isEqualTo("Be brief.");

        JsonNode score = log.get("results").get("scores").get(0);
        assertThat(score.get("scorer").asText()).isEqualTo("exact");
        RunStats.ModelStats a = stats.model("m-a").orElseThrow();
        assertThat(score.get("metrics").get("accuracy").get("value").asDouble()).isEqualTo(a.accuracy().mean())
                .isEqualTo(0.5);
        assertThat(score.get("metrics").get("stderr").get("value").asDouble())
                .isEqualTo(a.accuracy().standardError()).isCloseTo(0.2887, within(1e-4));
        assertThat(log.get("stats").get("started_at").asText()).isEqualTo("2025-05-01T10:00:00+00:00");
        assertThat(log.get("stats").get("completed_at").asText()).isEqualTo("2025-05-01T10:05:00+00:00");
        JsonNode usage = log.get("stats").get("model_usage").get("m-a");
        assertThat(usage.get("input_tokens").asLong()).isEqualTo(60);
        assertThat(usage.get("output_tokens").asLong()).isEqualTo(12);
        assertThat(usage.get("total_tokens").asLong()).isEqualTo(72);

        JsonNode samples = log.get("samples");
        assertThat(samples).hasSize(6);
        JsonNode first = samples.get(0);
        assertThat(first.get("id").asText()).isEqualTo("v1");
        assertThat(first.get("epoch").asInt()).isEqualTo(1);
        assertThat(first.get("input").get(0).get("role").asText()).isEqualTo("system");
        assertThat(first.get("input").get(1).get("role").asText()).isEqualTo("user");
        assertThat(first.get("input").get(1).get("content").asText()).isEqualTo("What is the capital of France?");
        assertThat(first.get("target").asText()).isEqualTo("Paris");
        assertThat(first.get("output").get("completion").asText()).isEqualTo("answer 0.0");
        assertThat(first.get("output").get("choices").get(0).get("stop_reason").asText()).isEqualTo("stop");
        assertThat(first.get("messages")).hasSize(3);
        assertThat(first.get("scores").get("exact").get("value").asDouble()).isEqualTo(1.0);
        assertThat(first.get("metadata").get("topic").asText()).isEqualTo("geo");
        assertThat(first.get("metadata").get("panoptes").get("worker_id").asText()).isEqualTo("w-1");
        assertThat(first.get("model_usage").get("m-a").get("input_tokens").asLong()).isEqualTo(10);
        assertThat(first.get("events")).isEmpty();
        List<String> sampleKeys = new ArrayList<>();
        samples.forEach(s -> sampleKeys.add(s.get("id").asText() + "/" + s.get("epoch").asInt()));
        assertThat(sampleKeys).as("the stored epochs 0 and 1 as Inspect numbers them")
                .containsExactly("v1/1", "v1/2", "v2/1", "v2/2", "v3/1", "v3/2");
        assertThat(score.get("reducer").asText()).isEqualTo("mean");
        assertThat(spec.get("config").get("epochs_reducer").get(0).asText()).isEqualTo("mean");
        JsonNode reductions = log.get("reductions");
        assertThat(reductions).hasSize(1);
        assertThat(reductions.get(0).get("scorer").asText()).isEqualTo("exact");
        assertThat(reductions.get(0).get("reducer").asText()).isEqualTo("mean");
        List<String> reduced = new ArrayList<>();
        reductions.get(0).get("samples").forEach(r -> reduced.add(r.get("sample_id").asText() + "="
                + r.get("value").asDouble()));
        assertThat(reduced).as("m-a: v1 1, 1; v2 1, 0; v3 0, 0").containsExactly("v1=1.0", "v2=0.5", "v3=0.0");

        JsonNode unscored = JSON.readTree(files.get(2).toFile());
        assertThat(unscored.has("results")).as("m-c has no scored sample").isFalse();
        assertThat(unscored.get("samples").get(0).has("scores")).isFalse();

        JsonNode listing = JSON.readTree(dir.resolve("logs").resolve(InspectLog.LISTING).toFile());
        assertThat(listing.size()).isEqualTo(3);
        JsonNode entry = listing.get(files.get(1).getFileName().toString());
        assertThat(entry.get("task").asText()).isEqualTo("capitals & <sums>");
        assertThat(entry.get("model").asText()).isEqualTo("m-b");
        assertThat(entry.get("status").asText()).isEqualTo("success");
        assertThat(entry.get("primary_metric").get("value").asDouble())
                .isEqualTo(stats.model("m-b").orElseThrow().accuracy().mean());
    }

    @Test
    void theEvalFormIsAZipOfTheSameLogWithOneMemberPerSampleAndTheirSummaries() throws Exception {
        RunData run = withManifest(ReportFixtures.run());
        ObjectNode log = InspectLog.log(run, RunStats.of(run, null), "m-a");

        Path zip = InspectLog.write(run, dir, InspectLog.LogFormat.EVAL).get(0);

        assertThat(zip.getFileName().toString()).isEqualTo("2025-05-01T10-00-00+00-00_capitals-sums-_r-1-m-a.eval");
        try (ZipFile file = new ZipFile(zip.toFile())) {
            List<String> names = file.stream().map(ZipEntry::getName).toList();
            assertThat(names).containsExactly("_journal/start.json", "samples/v1_epoch_1.json", "samples/v1_epoch_2.json",
                    "samples/v2_epoch_1.json", "samples/v2_epoch_2.json", "samples/v3_epoch_1.json",
                    "samples/v3_epoch_2.json", "_journal/summaries/1.json", "summaries.json", "reductions.json",
                    "header.json");
            JsonNode header = JSON.readTree(file.getInputStream(file.getEntry("header.json")));
            ObjectNode withoutSamples = log.deepCopy();
            withoutSamples.remove("samples");
            withoutSamples.remove("reductions");
            // As text: numbers read back may be of another Java type than those written.
            assertThat(header.toString()).isEqualTo(withoutSamples.toString());
            assertThat(JSON.readTree(file.getInputStream(file.getEntry("samples/v2_epoch_2.json"))).toString())
                    .isEqualTo(log.get("samples").get(3).toString());
            assertThat(JSON.readTree(file.getInputStream(file.getEntry("reductions.json"))).toString())
                    .isEqualTo(log.get("reductions").toString());
            JsonNode summaries = JSON.readTree(file.getInputStream(file.getEntry("summaries.json")));
            assertThat(summaries).hasSize(6);
            assertThat(summaries.get(3).get("scores").get("exact").get("value").asDouble()).isEqualTo(0.0);
            assertThat(summaries.get(3).get("completed").asBoolean()).isTrue();
            assertThat(summaries.get(3).has("messages")).isFalse();
        }
        assertThat(JSON.readTree(dir.resolve(InspectLog.LISTING).toFile()).has(zip.getFileName().toString())).isTrue();
    }

    @Test
    void aSecondRunIsAddedToTheListingAndTheSameRunReplacesItsOwnEntries() throws Exception {
        Path logs = dir.resolve("logs");
        RunData first = ReportFixtures.run();
        InspectLog.write(first, logs);
        InspectLog.write(first, logs);
        RunInfo i = first.info();
        RunData second = new RunData(new RunInfo("r-2", i.suite(), i.models(), i.scorer(), i.epochs(),
                i.startedAt(), i.vignettes()), first.samples(), List.of(), List.of());
        InspectLog.write(second, logs);

        assertThat(JSON.readTree(logs.resolve(InspectLog.LISTING).toFile()).size()).isEqualTo(6);
        try (var listed = Files.list(logs)) {
            assertThat(listed.filter(p -> p.toString().endsWith(".json"))).hasSize(7);
        }
    }

    @Test
    void aStoredChatIsSplitBackIntoItsTurnsAndAPlainPromptIsOneUserMessage() {
        List<String[]> turns = InspectSamples.turns("system: Answer in French.\nuser: Hi\nthere\nassistant: Bonjour"
                + "\nuser: Capital?");
        assertThat(turns).extracting(t -> t[0] + "=" + t[1]).containsExactly("system=Answer in French.",
                "user=Hi\nthere", "assistant=Bonjour", "user=Capital?");
        assertThat(InspectSamples.turns("What is 2+2?\nuser: not a turn")).extracting(t -> t[0] + "=" + t[1])
                .containsExactly("user=What is 2+2?\nuser: not a turn");
        assertThat(InspectSamples.input("Hi", null)).hasSize(1);
    }

    /** The fixture with the manifest and end time a real run records. */
    static RunData withManifest(RunData run) {
        RunInfo i = run.info();
        RunManifest manifest = new RunManifest(RunManifest.FORMAT, "1.2.3", "evals/capitals.jsonl", "ab12", 3,
                i.models(), "Be brief.", 0.0, 64, 7L, 2, null, null, 1, "");
        RunInfo info = new RunInfo(i.runId(), i.suite(), i.models(), i.scorer(), i.epochs(), i.startedAt(),
                i.vignettes(), manifest, Instant.parse("2025-05-01T10:05:00Z"), null, List.of());
        return new RunData(info, run.samples(), run.failures(), run.workerEvents());
    }
}
