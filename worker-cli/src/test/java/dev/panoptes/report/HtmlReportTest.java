package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.suite.RunManifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class HtmlReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void isSelfContained() throws IOException {
        String html = render(List.of(ReportFixtures.run()), "topic");
        String page = new ReportPage(html).withoutDataBlock();

        assertThat(page).doesNotContain("http://", "https://", "<link", "@import", "url(");
        assertThat(Pattern.compile("\\ssrc\\s*=", Pattern.CASE_INSENSITIVE).matcher(page).find())
                .as("no src= attribute").isFalse();
        assertThat(html).startsWith("<!DOCTYPE html>").contains("<style>").contains("<script>");
        assertThat(html).contains("Content-Security-Policy").contains("default-src 'none'");
    }

    @Test
    void embedsHostileSampleTextSoThatItCannotLeaveTheDataBlock() throws IOException {
        String html = render(List.of(ReportFixtures.run()), null);
        ReportPage page = new ReportPage(html);
        String data = page.dataBlock();

        assertThat(data).doesNotContain("</", "<!--", "\u2028").contains("<\\/script>");
        JsonNode json = JSON.readTree(data); // the whole block up to the first </script parses
        String samples = json.get("samples").toString();
        assertThat(json.get("samples")).hasSize(13);
        assertThat(json.get("samples").get(8).get(5).asText()).isEqualTo(ReportFixtures.HOSTILE_RESPONSE);
        assertThat(json.get("samples").get(8).get(8).asText()).isEqualTo(ReportFixtures.HOSTILE_EXPLANATION);
        assertThat(json.get("samples").get(8).get(4).asText()).isEqualTo(ReportFixtures.HOSTILE_PROMPT);
        assertThat(samples).contains("document.title");
        assertThat(ReportPage.count(html, "<script")).as("only the data block and the page's script")
                .isEqualTo(2 + ReportPage.count(data, "<script"));
    }

    @Test
    void escapesTextItRendersItself() throws IOException {
        String html = render(List.of(ReportFixtures.run()), null);

        assertThat(html).contains("<dd data-card=\"suite\">capitals &amp; &lt;sums&gt;</dd>");
        assertThat(new ReportPage(html).withoutDataBlock()).doesNotContain("<sums>");
    }

    @Test
    void showsTheFiguresOfRunStatsFormattedByFigures() throws IOException {
        RunData run = ReportFixtures.run();
        RunStats stats = RunStats.of(run, "topic");
        ReportPage page = new ReportPage(render(List.of(run), "topic"));

        for (RunStats.ModelStats m : stats.models()) {
            Estimate e = m.accuracy();
            assertThat(page.figure("accuracy", "r-1", m.model(), "accuracy")).isEqualTo(Figures.ratio(e.mean()));
            assertThat(page.figure("accuracy", "r-1", m.model(), "stderr")).isEqualTo(Figures.ratio(e.standardError()));
            assertThat(page.figure("accuracy", "r-1", m.model(), "ci-low")).isEqualTo(Figures.ratio(e.ciLow()));
            assertThat(page.figure("accuracy", "r-1", m.model(), "ci-high")).isEqualTo(Figures.ratio(e.ciHigh()));
            assertThat(page.figure("accuracy", "r-1", m.model(), "n")).isEqualTo(Figures.count(e.n()));
            assertThat(page.figure("volume", "r-1", m.model(), "prompt-tokens"))
                    .isEqualTo(Figures.count(m.promptTokens()));
        }
        // And the hand-checked values from RunStatsTest, so a shared mistake cannot pass unseen.
        assertThat(page.figure("accuracy", "r-1", "m-a", "accuracy")).isEqualTo("0.500");
        assertThat(page.figure("accuracy", "r-1", "m-b", "stderr")).isEqualTo("0.167");
        assertThat(page.figure("accuracy", "r-1", "m-c", "accuracy")).isEqualTo("n/a");
        assertThat(page.figure("comparison", "r-1", "m-b", "difference")).isEqualTo("+0.333");
        assertThat(page.figure("comparison", "r-1", "m-b", "difference-stderr")).isEqualTo("0.167");
        assertThat(page.figure("groups", "r-1", "m-a", "accuracy")).as("(none) sorts first").isEqualTo("0.000");
        assertThat(page.table("workers")).contains("<td class=\"num\" data-metric=\"p50-ms\">300</td>")
                .contains("<td class=\"num\" data-metric=\"p95-ms\">600</td>");
        assertThat(page.table("failures")).contains("timed out after 30000 ms");
    }

    @Test
    void leavesOutTheGroupTableWithoutAGroupByKey() throws IOException {
        assertThat(render(List.of(ReportFixtures.run()), null)).doesNotContain("<table class=\"groups\"");
    }

    @Test
    void capsTheEmbeddedSamplesAndSaysHowManyWereLeftOut() throws IOException {
        StringWriter out = new StringWriter();
        HtmlReport.write(List.of(ReportFixtures.run()), out, null, 5);
        ReportPage page = new ReportPage(out.toString());

        JsonNode json = JSON.readTree(page.dataBlock());
        assertThat(json.get("samples")).hasSize(5);
        assertThat(json.get("samplesTotal").asInt()).isEqualTo(13);
        assertThat(page.textOf("samples-capped")).contains("first 5 of 13 samples; 8 were left out");
        assertThat(out.toString()).contains("results --db FILE</code> exports them all");
        assertThat(page.textOf("sample-count")).isEqualTo("5 of 5 samples");
    }

    @Test
    void embedsAtMostTwentyThousandSamplesByDefault() throws IOException {
        RunInfo info = new RunInfo("big", "s", List.of("m"), "exact", 1, null, HtmlReport.MAX_EMBEDDED_SAMPLES + 5);
        List<SampleRow> samples = new java.util.ArrayList<>();
        for (int i = 0; i < HtmlReport.MAX_EMBEDDED_SAMPLES + 5; i++) {
            samples.add(new SampleRow("big", "m", 1, "v" + i, "j" + i, "p", "e", "r", 1.0, null, null, "w", null,
                    null, null, null, null));
        }
        String html = render(List.of(new RunData(info, samples, List.of(), List.of())), null);
        ReportPage page = new ReportPage(html);

        assertThat(JSON.readTree(page.dataBlock()).get("samples")).hasSize(20_000);
        assertThat(page.textOf("samples-capped")).contains("first 20000 of 20005 samples; 5 were left out");
    }

    @Test
    void capsAcrossSeveralRuns() throws IOException {
        StringWriter out = new StringWriter();
        HtmlReport.write(List.of(ReportFixtures.run(), ReportFixtures.run()), out, null, 20);

        assertThat(JSON.readTree(new ReportPage(out.toString()).dataBlock()).get("samples")).hasSize(20);
        assertThat(out.toString()).contains("<title>Panoptes report: 2 runs</title>");
    }

    @Test
    void writesAPageForNoRuns() throws IOException {
        String html = render(List.of(), null);

        assertThat(html).contains("No runs.").contains("0 of 0 samples");
    }

    @Test
    void writesAFileInUtf8(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("report.html");
        HtmlReport.write(List.of(ReportFixtures.run()), file, "topic");

        String html = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(html).isEqualTo(render(List.of(ReportFixtures.run()), "topic")).contains("&ndash;");
    }

    @Test
    void theRunCardListsEveryParameterAndSaysWhichOnesTheRunDidNotRecord() throws IOException {
        String html = render(List.of(ReportFixtures.run()), null);

        for (String key : List.of("runId", "label", "suite", "suiteHash", "vignettes", "models", "epochs", "jobSize",
                "temperature", "maxTokens", "seed", "systemPrompt", "fewShot", "scorer", "scoring", "toolVersion",
                "startedAt", "finishedAt", "duration")) {
            assertThat(html).as(key).contains("data-card=\"" + key + "\"");
        }
        assertThat(html).contains("<dd data-card=\"epochs\">2</dd>")
                .contains("<dd data-card=\"temperature\" class=\"muted\">not recorded</dd>")
                .contains("<dd data-card=\"scoring\">the stored scores, by exact</dd>");
        String data = new ReportPage(html).dataBlock();
        assertThat(data).contains("\"manifest\":{\"runId\":\"r-1\",\"label\":null,");
    }

    @Test
    void namesTheIntervalMethodOnceAndShowsFailedAnswersBesideTheFigure() throws IOException {
        RunData base = ReportFixtures.run();
        List<SampleRow> samples = new ArrayList<>(base.samples());
        samples.add(new SampleRow("r-1", "m-a", 3, "v1", "j-x", "user: What is the capital of France?", "Paris", "",
                0.0, "failed answer: content filter", Map.of("topic", "geo"), "w-1", null, 5L, null, null, null,
                "content_filter"));
        RunData run = new RunData(base.info(), samples, base.failures(), base.workerEvents());
        String html = render(List.of(run), null);
        ReportPage page = new ReportPage(html);

        assertThat(ReportPage.count(page.withoutDataBlock(), "Wilson, clustered by vignette")).isEqualTo(1);
        assertThat(page.withoutDataBlock()).doesNotContain("&plusmn;").doesNotContain("\u00b1");
        assertThat(page.figure("accuracy", "r-1", "m-a", "failed-answers")).isEqualTo("1");
        // 3 of 7 with the failed answer as 0; 3 of 6 without it.
        assertThat(page.figure("accuracy", "r-1", "m-a", "accuracy")).isEqualTo("0.429");
        assertThat(page.figure("accuracy", "r-1", "m-a", "accuracy-without-failed")).isEqualTo("0.500");
        assertThat(page.dataBlock()).contains("\"failedAnswers\":1,\"accuracyWithoutFailed\":{\"n\":6,");
    }

    @Test
    void theRunsStateIsAtTheTopOfItsSectionWithItsCounts() throws IOException {
        RunData base = ReportFixtures.run();
        RunInfo i = base.info();
        // The fixture's run asks 3 vignettes of 2 models in 2 epochs: ten vignettes ask more than is stored.
        RunInfo more = new RunInfo(i.runId(), i.suite(), i.models(), i.scorer(), i.epochs(), i.startedAt(), 10,
                i.manifest(), null, i.scoring(), i.scorings());
        String page = new ReportPage(render(List.of(new RunData(more, base.samples(), base.failures(),
                base.workerEvents())), null)).withoutDataBlock();
        String section = page.substring(page.indexOf("<section class=\"run\""));
        assertThat(section.indexOf("data-state=\"incomplete\"")).isPositive()
                .isLessThan(section.indexOf("run-card"));
        assertThat(section).containsPattern("Incomplete: \\d+ of 40 answers stored, \\d+ missing.*; it stopped"
                + " before its summary\\.");
    }

    @Test
    void aFailedAnswerWithoutAFailedJobIsListedWithItsReasonNotHiddenBehindNone() throws IOException {
        RunData base = ReportFixtures.run();
        List<SampleRow> samples = new ArrayList<>(base.samples());
        samples.add(new SampleRow("r-1", "m-a", 3, "v1", "j-x", "user: What is the capital of France?", "Paris", "",
                0.0, "failed answer: content filter", Map.of("topic", "geo"), "w-1", null, 5L, null, null, null,
                "HTTP 400: content_filter"));
        String html = render(List.of(new RunData(base.info(), samples, List.of(), base.workerEvents())), null);
        String page = new ReportPage(html).withoutDataBlock();

        assertThat(page).doesNotContain("<p class=\"muted\">None.</p>")
                .contains("No job failed for good; 1 answer failed (below).")
                .contains("<h3>Failed answers</h3>")
                .containsPattern("<tr class=\"failed-answer\" data-run=\"r-1\"><td>m-a</td><td>v1</td>"
                        + "<td class=\"num\">3</td><td>HTTP 400: content_filter</td></tr>");
    }

    @Test
    void theRunCardOfARunWithAManifestShowsEveryParameterItRecordedAndTheScoringShown() throws IOException {
        RunData fixture = ReportFixtures.run();
        RunInfo old = fixture.info();
        RunManifest manifest = new RunManifest(RunManifest.FORMAT, "0.1.0", "evals/math.jsonl", "ab".repeat(32), 3,
                old.models(), "Answer with the number only.", 0.0, 64, 7L, 2, "shots.jsonl", "cd".repeat(32), 8,
                "nightly");
        Instant started = Instant.parse("2026-12-01T10:00:00Z");
        Scoring first = new Scoring(1, "exact", started, Scoring.RUN);
        Scoring second = new Scoring(2, "normalized", started.plusSeconds(600), "rescore");
        RunInfo info = new RunInfo(old.runId(), old.suite(), old.models(), "normalized", 2, started, 3, manifest,
                started.plusSeconds(125), second, List.of(first, second));
        String html = render(List.of(new RunData(info, fixture.samples(), fixture.failures(), fixture.workerEvents())),
                null);

        assertThat(html).contains("<dd data-card=\"temperature\">0.0</dd>")
                .contains("<dd data-card=\"maxTokens\">64</dd>")
                .contains("<dd data-card=\"seed\">7</dd>")
                .contains("<dd data-card=\"systemPrompt\">Answer with the number only.</dd>")
                .contains("<dd data-card=\"fewShot\">shots.jsonl (SHA-256 " + "cd".repeat(32) + ")</dd>")
                .contains("<dd data-card=\"suiteHash\">" + "ab".repeat(32) + "</dd>")
                .contains("<dd data-card=\"jobSize\">8</dd>")
                .contains("<dd data-card=\"label\">nightly</dd>")
                .contains("<dd data-card=\"toolVersion\">0.1.0</dd>")
                .contains("<dd data-card=\"finishedAt\">2026-12-01T10:02:05Z</dd>")
                .contains("<dd data-card=\"duration\">2 min 05 s</dd>")
                .contains("<dd data-card=\"scoring\">scoring 2 of 2 (normalized, made by rescore at "
                        + "2026-12-01T10:10:00Z)</dd>")
                .doesNotContain(RunCard.NOT_RECORDED);
    }

    @Test
    void givenPricesEachRunShowsItsCostPerModelAndInAllAsRunCostsPrintsItAndWithoutNone() throws IOException {
        // m-a: 60 prompt and 12 completion tokens at 1,000 / 5,000 USD per million = 0.06 + 0.06.
        Prices prices = Prices.of(Map.of("m-a", new Price(1_000, 5_000)));
        StringWriter out = new StringWriter();
        HtmlReport.write(List.of(ReportFixtures.run()), out, null, prices);
        String html = out.toString();

        RunCosts costs = RunCosts.of(RunStats.of(ReportFixtures.run(), null), prices);
        assertThat(costs.totalText()).isEqualTo("0.1200");
        assertThat(html).contains("<th>Cost (USD)</th>")
                .contains("data-metric=\"cost-total\">" + costs.totalText() + "</span> USD (without m-b")
                .containsPattern("data-model=\"m-a\" data-metric=\"cost-usd\">0\\.1200<")
                .containsPattern("data-model=\"m-b\" data-metric=\"cost-usd\">no price<");
        assertThat(render(List.of(ReportFixtures.run()), null)).doesNotContain("Cost (USD)", "cost-total",
                "cost-usd");
    }

    private static String render(List<RunData> runs, String groupBy) throws IOException {
        StringWriter out = new StringWriter();
        HtmlReport.write(runs, out, groupBy);
        return out.toString();
    }
}
