package dev.panoptes.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.cli.ResultsCommand;
import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Sample;
import dev.panoptes.report.Figures;
import dev.panoptes.report.ReportPage;
import dev.panoptes.report.StreamedFigures;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One real run (two models, two epochs, a group-by key, workers over loopback TCP), then its
 * summary, its JSONL and CSV exports and its HTML report: every accuracy figure recomputed from
 * either export alone equals the one the summary prints and the one the report shows, and the
 * CSV gives back every cell of the JSONL, negative numbers included.
 */
class FiguresAgreeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
    }

    @Test
    void theSummaryTheExportAndTheReportAgreeOnEveryNumberOfARun() throws Exception {
        Path db = dir.resolve("r.db");
        StringWriter summaryOut = new StringWriter();
        CoordinatorRun run = new CoordinatorRun(settings(db), new PrintWriter(summaryOut, true),
                new PrintWriter(new StringWriter(), true), false, "java -jar worker.jar")
                .onListening(address -> {
                    startWorker(address, "w1");
                    startWorker(address, "w2");
                });
        assertThat(run.run()).isZero();
        String summary = summaryOut.toString();
        // Counted as the answers were stored, not read back: and still every figure below agrees.
        assertThat(run.summaryCountedAsStored()).isTrue();
        String runId = runIdOf(summary);
        // The summary's figures were streamed from the store: they are those of every answer loaded.
        assertThat(StreamedFigures.assertAgree(db)).isEqualTo(1);

        // The run's record beside the export: every parameter that decided its answers, typed.
        Path manifestFile = dir.resolve("manifest.json");
        command("results", "--db", db.toString(), "--run", runId, "--manifest", manifestFile.toString());
        JsonNode recorded = JSON.readTree(Files.readString(manifestFile)).get("runs").get(0);
        JsonNode manifest = recorded.get("runManifest");
        assertThat(manifest.get("temperature").asDouble()).isEqualTo(0.0);
        assertThat(manifest.get("maxTokens").asInt()).isEqualTo(64);
        // No --seed (the fake workers tell epochs apart by their seeds 0 and 1): recorded as null, the API's default.
        assertThat(manifest.get("seed").isNull()).isTrue();
        assertThat(manifest.get("systemPrompt").asText()).isEqualTo("Answer briefly.");
        assertThat(manifest.get("epochs").asInt()).isEqualTo(2);
        assertThat(manifest.get("jobSize").asInt()).isEqualTo(3);
        assertThat(manifest.get("suiteSha256").asText()).hasSize(64);
        assertThat(manifest.get("models").toString()).isEqualTo("[\"big\",\"small\"]");
        assertThat(recorded.get("scoring").get("number").asInt()).isEqualTo(1);
        assertThat(recorded.get("scoring").get("scorer").asText()).isEqualTo("normalized");
        assertThat(recorded.get("manifest").get("finishedAt").isNull()).as("the run's end is recorded").isFalse();

        // The export: every answer, with its score; recompute the figures from it alone.
        List<JsonNode> rows = new ArrayList<>();
        for (String line : command("results", "--db", db.toString(), "--run", runId).split("\n")) {
            rows.add(JSON.readTree(line));
        }
        assertThat(rows).hasSize(20 * 2 * 2);
        Map<String, List<Sample>> byModel = new LinkedHashMap<>();
        Map<String, List<Sample>> byModelAndTopic = new LinkedHashMap<>();
        for (JsonNode r : rows) {
            if (r.get("score").isNull()) {
                continue;
            }
            Sample s = new Sample(r.get("vignetteId").asText(), r.get("score").asDouble());
            byModel.computeIfAbsent(r.get("model").asText(), k -> new ArrayList<>()).add(s);
            byModelAndTopic.computeIfAbsent(r.get("model").asText() + "/" + r.get("metadata").get("topic").asText(),
                    k -> new ArrayList<>()).add(s);
        }
        assertThat(byModel).containsOnlyKeys("big", "small");
        String csv = command("results", "--db", db.toString(), "--run", runId, "--format", "csv");
        List<List<String>> csvRows = parseCsv(csv);
        assertThat(csvRows).hasSize(1 + rows.size());
        List<String> header = csvRows.get(0);
        assertThat(header).containsExactlyElementsOf(ResultsCommand.CSV_HEADER);
        Map<String, List<Sample>> csvByModel = new LinkedHashMap<>();
        Map<String, List<Sample>> csvByModelAndTopic = new LinkedHashMap<>();
        int negatives = 0;
        for (int i = 0; i < rows.size(); i++) {
            List<String> cells = csvRows.get(i + 1);
            JsonNode r = rows.get(i);
            // Every text cell comes back as the JSONL has it: "-24" is not "'-24".
            for (String column : List.of("runId", "model", "vignetteId", "prompt", "expected", "response")) {
                assertThat(cells.get(header.indexOf(column))).as("%s of row %d", column, i).isEqualTo(r.get(column).asText());
            }
            negatives += r.get("expected").asText().startsWith("-") ? 1 : 0;
            String score = cells.get(header.indexOf("score"));
            if (score.isEmpty()) {
                continue;
            }
            Sample s = new Sample(cells.get(header.indexOf("vignetteId")), Double.parseDouble(score));
            String model = cells.get(header.indexOf("model"));
            String topic = JSON.readTree(cells.get(header.indexOf("metadata"))).get("topic").asText();
            csvByModel.computeIfAbsent(model, k -> new ArrayList<>()).add(s);
            csvByModelAndTopic.computeIfAbsent(model + "/" + topic, k -> new ArrayList<>()).add(s);
        }
        assertThat(negatives).as("rows whose expected answer is a negative number").isEqualTo(4 * 2 * 2);
        assertThat(csvByModel).isEqualTo(byModel);
        assertThat(csvByModelAndTopic).isEqualTo(byModelAndTopic);

        Path reportFile = dir.resolve("report.html");
        assertThat(command("report", "--db", db.toString(), "--out", reportFile.toString(), "--group-by", "topic"))
                .startsWith("wrote " + reportFile + ": 1 run, 80 answers");
        ReportPage report = new ReportPage(Files.readString(reportFile));

        for (Map.Entry<String, List<Sample>> m : byModel.entrySet()) {
            Estimate e = Accuracy.of(m.getValue());
            assertThat(e.clustered()).as("two epochs: clustered by vignette").isTrue();
            assertThat(summary).contains("    " + m.getKey() + ": " + RunSummary.line(e));
            assertThat(report.figure("accuracy", runId, m.getKey(), "accuracy")).isEqualTo(Figures.ratio(e.mean()));
            assertThat(report.figure("accuracy", runId, m.getKey(), "stderr")).isEqualTo(Figures.ratio(e.standardError()));
            assertThat(report.figure("accuracy", runId, m.getKey(), "ci-low")).isEqualTo(Figures.ratio(e.ciLow()));
            assertThat(report.figure("accuracy", runId, m.getKey(), "ci-high")).isEqualTo(Figures.ratio(e.ciHigh()));
            assertThat(report.figure("accuracy", runId, m.getKey(), "n")).isEqualTo(Figures.count(e.n()));
        }
        for (Map.Entry<String, List<Sample>> g : byModelAndTopic.entrySet()) {
            String[] modelAndTopic = g.getKey().split("/");
            assertThat(summary).contains("      topic=" + modelAndTopic[1] + ": " + RunSummary.line(Accuracy.of(g.getValue())));
        }
        // The small model's answers end with a full stop, which exact match would have failed: (20 + 3) / 40.
        assertThat(Accuracy.of(byModel.get("small")).mean()).isEqualTo(23 / 40.0);
    }

    /** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; records end in CRLF. */
    private static List<List<String>> parseCsv(String text) {
        List<List<String>> records = new ArrayList<>();
        List<String> record = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') {
                    field.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    field.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                record.add(field.toString());
                field.setLength(0);
            } else if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') {
                record.add(field.toString());
                field.setLength(0);
                records.add(record);
                record = new ArrayList<>();
                i++;
            } else {
                field.append(c);
            }
        }
        return records;
    }

    private String command(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        assertThat(exit).as("exit of %s; stderr: %s", List.of(args), err).isZero();
        return out.toString();
    }

    private static String runIdOf(String summary) {
        Matcher m = Pattern.compile("\\(run id ([0-9a-f]{16})\\)").matcher(summary);
        assertThat(m.find()).as("a run id in:%n%s", summary).isTrue();
        return m.group(1);
    }

    /**
     * big is right except on vignettes 3, 7, ...; small is right on even vignettes, and in the
     * second epoch on odd multiples of 3 too, always with a full stop.
     */
    private static JobRunner runner() {
        return job -> {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                int n = Integer.parseInt(v.id().substring(1));
                boolean small = job.model().equals("small");
                // The epoch is not on the wire; its seed is (epoch e is asked with seed e).
                boolean secondEpoch = Long.valueOf(1).equals(job.spec().params().seed());
                boolean right = small ? n % 2 == 0 || secondEpoch && n % 3 == 0 : n % 4 != 3;
                String text = right ? v.expected() + (small ? "." : "") : "no idea";
                records.add(new ResponseRecord(v.id(), text, job.model(), "stop", 3L + n, new Usage(n, 1)));
            }
            return new JobOutcome(job.id(), records);
        };
    }

    private void startWorker(InetSocketAddress coordinator, String id) {
        WorkerOptions options = WorkerOptions.defaults().withModels(List.of("big", "small"))
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, id, 2, runner(), options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private CoordinatorSettings settings(Path db) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"question ").append(i)
                    // Four expected answers are negative numbers, as in "What is 65 - 89?".
                    .append("\",\"expected\":\"").append(i % 5 == 1 ? "-" + (i * 3) : "Answer " + i)
                    .append("\",\"metadata\":{\"topic\":\"")
                    .append(i < 8 ? "geo" : "sums").append("\"}}\n");
        }
        Path suite = Files.writeString(dir.resolve("suite.jsonl"), sb.toString());
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite, db, 3, "",
                null, new SpecParams("Answer briefly.", 0.0, 64, null), 3, Duration.ofSeconds(30), Duration.ofMillis(200), Duration.ofSeconds(2), null,
                List.of("big", "small"), "normalized", 2, null, "topic");
    }
}
