package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.stats.Estimate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Opens reports in a real headless Chromium and uses them as a person would: reads back the DOM
 * after the page's script ran, takes a screenshot, clicks headers and boxes and reads the rows.
 *
 * <p>Needs Debian's {@code chromium} package ({@code bash .ci/test}, the README's test command,
 * installs it); without it the test fails and says how to install it. One browser, with a fresh profile directory, serves every
 * test of the class over the DevTools protocol ({@link DevToolsPage}), since starting Chromium
 * is most of the cost; it is ended after the last test, and each call waits at most 30 s.
 */
class HtmlReportBrowserTest {
    private static final long CHROMIUM_TIMEOUT_S = 60;
    private static final String TITLE = "Panoptes report: " + ReportFixtures.RUN;

    @TempDir
    static Path profile;

    private static DevToolsPage browser;

    @TempDir
    Path dir;

    @BeforeAll
    static void startChromium() throws Exception {
        browser = DevToolsPage.start(chromiumBinary(), profile);
    }

    @AfterAll
    static void stopChromium() {
        if (browser != null) {
            browser.close();
        }
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void showsRunStatsFiguresFiltersByTheFragmentAndRunsNoInjectedScript() throws Exception {
        RunData run = ReportFixtures.run();
        RunStats stats = RunStats.of(run, "topic");
        Path report = dir.resolve("report.html");
        Prices prices = Prices.of(Map.of("m-a", new Price(1_000, 5_000), "m-b", new Price(0.15, 0.6)));
        RunCosts costs = RunCosts.of(stats, prices);
        HtmlReport.write(List.of(run), report, "topic", prices);
        String url = report.toUri() + "#q=paris";

        browser.open(url);
        ReportPage dom = new ReportPage(browser.evaluate("document.documentElement.outerHTML").asText());

        for (RunStats.ModelStats m : stats.models()) {
            Estimate e = m.accuracy();
            assertThat(dom.figure("accuracy", ReportFixtures.RUN, m.model(), "accuracy")).isEqualTo(Figures.ratio(e.mean()));
            assertThat(dom.figure("accuracy", ReportFixtures.RUN, m.model(), "stderr"))
                    .isEqualTo(Figures.ratio(e.standardError()));
            assertThat(dom.figure("accuracy", ReportFixtures.RUN, m.model(), "ci-low")).isEqualTo(Figures.ratio(e.ciLow()));
            assertThat(dom.figure("accuracy", ReportFixtures.RUN, m.model(), "ci-high")).isEqualTo(Figures.ratio(e.ciHigh()));
            assertThat(dom.figure("accuracy", ReportFixtures.RUN, m.model(), "n")).isEqualTo(Figures.count(e.n()));
            assertThat(dom.figure("volume", ReportFixtures.RUN, m.model(), "prompt-tokens"))
                    .isEqualTo(Figures.count(m.promptTokens()));
            assertThat(dom.figure("volume", ReportFixtures.RUN, m.model(), "cost-usd"))
                    .isEqualTo(costs.modelText(m.model()));
        }
        assertThat(dom.withoutDataBlock()).contains("data-metric=\"cost-total\">" + costs.totalText() + "<");

        List<ReportPage.Row> rows = dom.sampleRows();
        assertThat(rows).as("the script built every sample row").hasSize(13);
        List<ReportPage.Row> visible = rows.stream().filter(r -> !r.hidden()).toList();
        assertThat(visible).as("#q=paris leaves the five v1 samples").hasSize(5)
                .allSatisfy(r -> assertThat(r.text().toLowerCase(Locale.ROOT)).contains("paris"));
        assertThat(rows.stream().filter(ReportPage.Row::hidden))
                .allSatisfy(r -> assertThat(r.text().toLowerCase(Locale.ROOT)).doesNotContain("paris"));
        assertThat(dom.textOf("sample-count")).isEqualTo("5 of 13 samples");

        assertThat(dom.title()).as("injected scripts would have changed the title").isEqualTo(TITLE);
        assertThat(ReportPage.count(dom.withoutDataBlock(), "<script")).as("no script element was injected")
                .isEqualTo(2);
        assertThat(dom.withoutDataBlock()).doesNotContain("<img")
                .contains("&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;");

        // The run's state first thing in its section, as the page shows it.
        JsonNode state = browser.evaluate("(function () { var p = document.querySelector('section.run > p.run-state');"
                + " return {state: p.dataset.state, text: p.textContent,"
                + " first: p.previousElementSibling.tagName + '+' + p.nextElementSibling.className}; })()");
        assertThat(state.get("state").asText()).isEqualTo("incomplete");
        assertThat(state.get("text").asText()).startsWith("Incomplete: 13 of 12 answers stored").contains("1 failed job");
        assertThat(state.get("first").asText()).as("under the title, above the run card").isEqualTo("H2+info run-card");

        // The chart of accuracy per group: a bar per group and model, a whisker per interval.
        JsonNode chart = browser.evaluate("(function () { var svg = document.querySelector('section.run svg.group-chart');"
                + " if (!svg) { return null; }"
                + " return {label: svg.getAttribute('aria-label'), width: svg.getBoundingClientRect().width,"
                + "  bars: Array.from(svg.querySelectorAll('rect.group-bar')).map(function (r) {"
                + "   return {group: r.dataset.group, model: r.dataset.model, mean: r.dataset.mean,"
                + "    width: r.getBoundingClientRect().width}; }),"
                + "  whiskers: Array.from(svg.querySelectorAll('g.group-ci')).map(function (g) {"
                + "   return {group: g.dataset.group, model: g.dataset.model, low: g.dataset.ciLow, high: g.dataset.ciHigh,"
                + "    width: g.getBoundingClientRect().width}; }) }; })()");
        assertThat(chart.isNull()).as("the report has a group chart").isFalse();
        assertThat(chart.get("label").asText()).contains("topic").contains(
                dev.panoptes.control.stats.Accuracy.METHOD);
        assertThat(chart.get("width").asDouble()).isPositive();
        List<String> bars = new ArrayList<>();
        List<String> whiskers = new ArrayList<>();
        for (RunStats.ModelStats m : stats.models()) {
            for (Map.Entry<String, Estimate> g : m.byGroup().entrySet()) {
                Estimate e = g.getValue();
                bars.add(g.getKey() + "/" + m.model() + "=" + Figures.ratio(e.mean()));
                if (e.hasInterval()) {
                    whiskers.add(g.getKey() + "/" + m.model() + "=" + Figures.ratio(e.ciLow()) + ".."
                            + Figures.ratio(e.ciHigh()));
                }
            }
        }
        List<String> drawnBars = new ArrayList<>();
        chart.get("bars").forEach(b -> drawnBars.add(b.get("group").asText() + "/" + b.get("model").asText() + "="
                + b.get("mean").asText()));
        List<String> drawnWhiskers = new ArrayList<>();
        chart.get("whiskers").forEach(w -> {
            assertThat(w.get("width").asDouble()).as("a drawn interval %s", w).isPositive();
            drawnWhiskers.add(w.get("group").asText() + "/" + w.get("model").asText() + "=" + w.get("low").asText()
                    + ".." + w.get("high").asText());
        });
        assertThat(drawnBars).as("one bar per group and model").containsExactlyInAnyOrderElementsOf(bars);
        assertThat(drawnWhiskers).as("the group table's intervals").containsExactlyInAnyOrderElementsOf(whiskers)
                .isNotEmpty();

        Path png = dir.resolve("report.png");
        browser.screenshot(png);
        assertThat(png).exists();
        assertThat(Files.size(png)).as("a 1280x2000 screenshot of a real page").isGreaterThan(20_000);
        copyScreenshotIfAsked(png);
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void theSamplesTableSortsByAClickedHeaderAndFiltersToWrongAnswersAModelAndAGroup() throws Exception {
        // The fixture under a real 16-character run id, which used to wrap three characters a line.
        RunData fixture = ReportFixtures.run();
        String runId = "e59662dae82fbe62";
        List<SampleRow> samples = new ArrayList<>();
        for (SampleRow r : fixture.samples()) {
            samples.add(new SampleRow(runId, r.model(), r.epoch(), r.vignetteId(), r.jobId(), r.prompt(), r.expected(),
                    r.response(), r.score(), r.explanation(), r.metadata(), r.workerId(), r.apiModel(), r.latencyMs(),
                    r.promptTokens(), r.completionTokens(), r.finishReason(), r.error()));
        }
        RunInfo info = fixture.info();
        RunData run = new RunData(new RunInfo(runId, info.suite(), info.models(), info.scorer(), info.epochs(),
                info.startedAt(), info.vignettes()), samples, List.of(), List.of());
        Path report = dir.resolve("sortable.html");
        HtmlReport.write(List.of(run), report, "topic");

        DevToolsPage page = browser;
        page.open(report.toUri().toString());
        assertThat(visibleColumn(page, 7)).as("storage order first").hasSize(13);

        // Sort by score: ascending, unscored (blank) last; a second click reverses the numbers.
        page.click("table.samples th[data-column='7']");
        assertThat(visibleColumn(page, 7)).containsExactly("0.000", "0.000", "0.000", "0.000", "1.000", "1.000",
                "1.000", "1.000", "1.000", "1.000", "1.000", "1.000", "");
        assertThat(page.evaluate("document.querySelector(\"th[data-column='7']\").getAttribute('aria-sort')")
                .asText()).isEqualTo("ascending");
        page.click("table.samples th[data-column='7']");
        assertThat(visibleColumn(page, 7)).startsWith("1.000").endsWith("0.000", "");
        // Sort by vignette (text): v1 first; ties keep the order the previous sort left.
        page.click("table.samples th[data-column='3']");
        assertThat(visibleColumn(page, 3)).containsExactly("v1", "v1", "v1", "v1", "v1", "v2", "v2", "v2", "v2",
                "v3", "v3", "v3", "v3");

        // Wrong only: the four samples scored 0 (m-a v2 epoch 2, v3 twice; m-b v3 epoch 2).
        page.click("#sample-wrong");
        assertThat(visibleColumn(page, 7)).containsExactly("0.000", "0.000", "0.000", "0.000");
        assertThat(page.evaluate("document.getElementById('sample-count').textContent").asText())
                .isEqualTo("4 of 13 samples");
        // ... of model m-b only (a select takes a choice, not a click: set it as a person's choice does).
        choose(page, "sample-model", "m-b");
        assertThat(visibleColumn(page, 1)).containsExactly("m-b");
        assertThat(visibleColumn(page, 3)).containsExactly("v3");
        // All of m-b's samples in group geo (v1 and v2): the checkbox clicked off again.
        page.click("#sample-wrong");
        choose(page, "sample-group", "geo");
        assertThat(visibleColumn(page, 3)).containsExactly("v1", "v1", "v2", "v2");
        choose(page, "sample-group", RunStats.NO_GROUP);
        assertThat(visibleColumn(page, 3)).containsExactly("v3", "v3");

        // The run column: a short id on one line, the whole id on hover.
        JsonNode cell = page.evaluate("(function () {"
                + " var td = document.querySelector('#sample-rows tr.sample:not([hidden]) td.run-id');"
                + " var range = document.createRange(); range.selectNodeContents(td);"
                + " return {text: td.textContent, title: td.title, lines: range.getClientRects().length}; })()");
        assertThat(cell.get("text").asText()).isEqualTo("e59662da");
        assertThat(cell.get("title").asText()).isEqualTo(runId);
        assertThat(cell.get("lines").asInt()).as("line boxes of the run id").isEqualTo(1);
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void atA1400PixelWindowTheErrorAndCachedFromCellsAreWhollyOnScreenAndNotClipped() throws Exception {
        Path report = dir.resolve("wide.html");
        HtmlReport.write(List.of(ReportFixtures.runWithLongCells()), report, null);
        try {
            browser.viewport(1400, 900);
            browser.open(report.toUri().toString());
            JsonNode page = browser.evaluate("(function () {"
                    + " var heads = Array.from(document.querySelectorAll('table.samples thead th'))"
                    + "   .map(function (th) { return th.textContent; });"
                    + " var wanted = [heads.indexOf('error'), heads.indexOf('cached from')];"
                    + " var cells = [];"
                    + " document.querySelectorAll('#sample-rows tr.sample').forEach(function (tr) {"
                    + "  wanted.forEach(function (i) {"
                    + "   var td = tr.cells[i]; var inner = td.firstElementChild || td;"
                    + "   var box = td.getBoundingClientRect();"
                    + "   cells.push({column: heads[i], text: td.textContent, left: box.left, right: box.right,"
                    + "    scrollWidth: inner.scrollWidth, clientWidth: inner.clientWidth,"
                    + "    tdScrollWidth: td.scrollWidth, tdClientWidth: td.clientWidth}); }); });"
                    + " var scroller = document.querySelector('#samples .scroll');"
                    + " return {window: window.innerWidth, visible: document.documentElement.clientWidth, columns: wanted, cells: cells,"
                    + "  scrollerScroll: scroller.scrollWidth, scrollerClient: scroller.clientWidth}; })()");
            assertThat(page.get("window").asInt()).isEqualTo(1400);
            assertThat(page.get("columns")).allSatisfy(c -> assertThat(c.asInt()).isNotNegative());
            assertThat(page.get("scrollerScroll").asInt()).as("the samples table needs no sideways scrolling: %s", page)
                    .isLessThanOrEqualTo(page.get("scrollerClient").asInt());
            assertThat(page.get("cells")).hasSize(2 * ReportFixtures.runWithLongCells().samples().size())
                    .allSatisfy(c -> {
                        assertThat(c.get("left").asDouble()).as("%s", c).isGreaterThanOrEqualTo(0);
                        assertThat(c.get("right").asDouble()).as("%s is within the window", c)
                                .isLessThanOrEqualTo(page.get("visible").asDouble());
                        assertThat(c.get("scrollWidth").asInt()).as("%s is not cut off", c)
                                .isLessThanOrEqualTo(c.get("clientWidth").asInt());
                        assertThat(c.get("tdScrollWidth").asInt()).as("%s is not cut off", c)
                                .isLessThanOrEqualTo(c.get("tdClientWidth").asInt());
                    });
            assertThat(page.get("cells").findValuesAsText("text")).contains(ReportFixtures.LONG_ERROR,
                    ReportFixtures.CACHED_FROM);
            Path png = dir.resolve("wide.png");
            browser.screenshot(png);
            copyScreenshotIfAsked(png);
        } finally {
            browser.defaultViewport();
        }
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void aRunItsBudgetStoppedSaysSoAtTheTopOfItsSection() throws Exception {
        RunData fixture = ReportFixtures.run();
        RunInfo info = fixture.info();
        java.time.Instant start = info.startedAt();
        List<dev.panoptes.control.store.RunSitting> sittings = List.of(new dev.panoptes.control.store.RunSitting(1,
                start, start.plusSeconds(5), 13, true, new dev.panoptes.control.store.RunStop(
                dev.panoptes.control.store.RunStop.BUDGET, "the cost budget (--max-cost) stopped the run: 0.0200 of"
                + " 0.0200 USD spent; 2 jobs not run")));
        RunData run = new RunData(new RunInfo(info.runId(), info.suite(), info.models(), info.scorer(), info.epochs(),
                start, info.vignettes(), null, null, null, List.of(), sittings), fixture.samples(), fixture.failures(),
                List.of());
        Path report = dir.resolve("stopped.html");
        HtmlReport.write(List.of(run), report, null);

        browser.open(report.toUri().toString());
        JsonNode state = browser.evaluate("(function () { var p = document.querySelector('section.run > p.run-state');"
                + " var box = p.getBoundingClientRect();"
                + " return {state: p.dataset.state, text: p.textContent, shown: box.height > 0 && box.width > 0}; })()");
        assertThat(state.get("state").asText()).isEqualTo("stopped-by-budget");
        assertThat(state.get("shown").asBoolean()).isTrue();
        assertThat(state.get("text").asText()).startsWith("Stopped by its budget: the cost budget (--max-cost) stopped"
                + " the run: 0.0200 of 0.0200 USD spent; 2 jobs not run. Incomplete: 13 of 12 answers stored");
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void aSampleOfAnAgentRunExpandsToItsTranscriptToolCallsOutputsExitStatusDurationsAndTokens() throws Exception {
        Path db = AgentRun.evalInto(dir);
        Path report = dir.resolve("agent.html");
        AgentRun.cli("report", "--db", db.toString(), "--out", report.toString());

        browser.open(report.toUri().toString());
        String rowOf = "Array.from(document.querySelectorAll('#sample-rows tr.sample')).filter(function (r) {"
                + " return r.cells[3].firstChild.textContent === '" + AgentRun.PYTHON_TASK + "'; })[0]";
        JsonNode before = browser.evaluate("(function () { var tr = " + rowOf + ";"
                + " return {buttons: document.querySelectorAll('button.transcript-toggle').length,"
                + "  open: document.querySelectorAll('tr.transcript-row:not([hidden])').length,"
                + "  expanded: tr.querySelector('button.transcript-toggle').getAttribute('aria-expanded')}; })()");
        assertThat(before.get("buttons").asInt()).as("every sample of the agent suite has a transcript").isEqualTo(8);
        assertThat(before.get("open").asInt()).as("transcripts start closed").isZero();
        assertThat(before.get("expanded").asText()).isEqualTo("false");

        browser.evaluate("(function () { var tr = " + rowOf + "; tr.querySelector('button.transcript-toggle').click();"
                + " return true; })()");
        JsonNode shown = browser.evaluate("(function () { var tr = " + rowOf + "; var d = tr.nextElementSibling;"
                + " var box = d.getBoundingClientRect();"
                + " function texts(sel) { return Array.from(d.querySelectorAll(sel)).map(function (e) {"
                + "  return e.textContent; }); }"
                + " return {detail: d.className, hidden: d.hidden, height: box.height,"
                + "  summary: d.querySelector('.transcript-summary').textContent,"
                + "  types: Array.from(d.querySelectorAll('li.event')).map(function (li) { return li.dataset.type; }),"
                + "  tools: Array.from(d.querySelectorAll('li.event[data-type=tool]')).map(function (li) {"
                + "   return {name: li.querySelector('.tool-name').textContent,"
                + "    arguments: li.querySelector('.tool-arguments').textContent,"
                + "    output: li.querySelector('.tool-output').textContent,"
                + "    meta: (li.querySelector('.event-meta') || {textContent: ''}).textContent}; }),"
                + "  models: texts('li.event[data-type=model] .event-meta'),"
                + "  check: texts('li.event[data-type=check]'),"
                + "  expanded: tr.querySelector('button.transcript-toggle').getAttribute('aria-expanded')}; })()");
        assertThat(shown.get("detail").asText()).isEqualTo("transcript-row");
        assertThat(shown.get("hidden").asBoolean()).isFalse();
        assertThat(shown.get("height").asDouble()).as("the transcript is on screen").isPositive();
        assertThat(shown.get("expanded").asText()).isEqualTo("true");
        assertThat(shown.get("summary").asText()).matches("2 model turns, \\d+ tokens, no limit met\\.");
        assertThat(shown.get("types")).extracting(JsonNode::asText)
                .containsExactly("model", "tool", "model", "tool");
        JsonNode python = shown.get("tools").get(0);
        assertThat(python.get("name").asText()).isEqualTo("python");
        assertThat(python.get("arguments").asText()).isEqualTo("code: " + AgentRun.PYTHON_CODE);
        assertThat(python.get("output").asText()).isEqualTo(AgentRun.PYTHON_OUTPUT + "\n");
        assertThat(python.get("meta").asText()).matches(" \\(exit 0, \\d+ ms\\)");
        assertThat(shown.get("tools").get(1).get("name").asText()).isEqualTo("submit");
        assertThat(shown.get("models")).allSatisfy(m -> assertThat(m.asText())
                .matches(" \\(\\d+ prompt \\+ \\d+ completion tokens, \\d+ ms, finish: \\w+\\)"));
        assertThat(shown.get("check")).as("this task is scored by its expected answer, not a check").isEmpty();

        // Sorting keeps the transcript under its sample; clicking again closes it.
        browser.click("table.samples th[data-column='3']");
        browser.click("table.samples th[data-column='3']");
        JsonNode after = browser.evaluate("(function () { var tr = " + rowOf + "; var d = tr.nextElementSibling;"
                + " var first = document.querySelector('#sample-rows tr.sample');"
                + " tr.querySelector('button.transcript-toggle').click();"
                + " return {under: d.className, firstIs: first.cells[3].firstChild.textContent, closed: d.hidden}; })()");
        assertThat(after.get("firstIs").asText()).as("sorted descending by vignette").isEqualTo("agent-08-setup");
        assertThat(after.get("under").asText()).isEqualTo("transcript-row");
        assertThat(after.get("closed").asBoolean()).isTrue();
    }

    @Test
    @Timeout(value = CHROMIUM_TIMEOUT_S, unit = TimeUnit.SECONDS)
    void aTranscriptsCommandsAndOutputsAreShownAsTextNeverRunAsMarkup() throws Exception {
        String hostile = "</script><script>document.title='pwned'</script><img src=x onerror=\"document.title='img'\">";
        String transcript = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(Map.of(
                "turns", 1, "tokens", 9, "events", List.of(
                        Map.of("type", "model", "turn", 1, "text", hostile, "toolCalls", List.of()),
                        Map.of("type", "tool", "id", "c1", "name", "bash", "arguments",
                                new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(
                                        Map.of("cmd", "echo '" + hostile + "'")),
                                "output", hostile + "\u2028<!--", "exitStatus", 0, "durationMs", 3))));
        SampleRow sample = new SampleRow(ReportFixtures.RUN, "m-a", 0, "v1", "j1", "p", "e", "r", 0.0, null, Map.of(),
                "w", "m-a", 3L, 5L, 4L, "stop", null, null, transcript);
        RunInfo info = ReportFixtures.run().info();
        Path report = dir.resolve("hostile.html");
        HtmlReport.write(List.of(new RunData(new RunInfo(info.runId(), info.suite(), info.models(), info.scorer(), 1,
                info.startedAt(), 1), List.of(sample), List.of(), List.of())), report, null);

        browser.open(report.toUri().toString());
        JsonNode page = browser.evaluate("(function () { document.querySelector('button.transcript-toggle').click();"
                + " var d = document.querySelector('tr.transcript-row');"
                + " return {title: document.title, images: document.images.length,"
                + "  scripts: document.scripts.length, text: d.querySelector('pre.model-text').textContent,"
                + "  arguments: d.querySelector('pre.tool-arguments').textContent,"
                + "  output: d.querySelector('pre.tool-output').textContent}; })()");
        assertThat(page.get("title").asText()).isEqualTo(TITLE);
        assertThat(page.get("images").asInt()).isZero();
        assertThat(page.get("scripts").asInt()).as("the data block and the page's script").isEqualTo(2);
        assertThat(page.get("text").asText()).isEqualTo(hostile);
        assertThat(page.get("arguments").asText()).isEqualTo("cmd: echo '" + hostile + "'");
        assertThat(page.get("output").asText()).isEqualTo(hostile + "\u2028<!--");
    }

    /** The text of one column in the rows the filters leave visible, top to bottom. */
    private static List<String> visibleColumn(DevToolsPage page, int column) throws Exception {
        JsonNode cells = page.evaluate("Array.from(document.querySelectorAll('#sample-rows tr.sample'))"
                + ".filter(function (r) { return !r.hidden; })"
                + ".map(function (r) { return r.cells[" + column + "].textContent; })");
        List<String> out = new ArrayList<>();
        cells.forEach(c -> out.add(c.asText()));
        return out;
    }

    /** Picks an option of a select element and fires the change event a person's choice fires. */
    private static void choose(DevToolsPage page, String id, String value) throws Exception {
        page.evaluate("(function () { var s = document.getElementById('" + id + "'); s.value = "
                + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(value)
                + "; s.dispatchEvent(new Event('change')); return s.value; })()");
    }

    /** Chromium from the PATH, else Debian's /usr/bin/chromium; fails with advice when neither exists. */
    private static String chromiumBinary() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                File candidate = new File(entry, "chromium");
                if (candidate.isFile() && candidate.canExecute()) {
                    return candidate.getPath();
                }
            }
        }
        File debian = new File("/usr/bin/chromium");
        if (debian.isFile() && debian.canExecute()) {
            return debian.getPath();
        }
        throw new AssertionError("HtmlReportBrowserTest needs headless Chromium, and there is no 'chromium' on"
                + " the PATH (" + path + ") nor at /usr/bin/chromium. Install Debian's package:"
                + " sudo apt-get install -y chromium (bash .ci/test, the README's test command, does this).");
    }

    /** Keeps the screenshot for a person to look at: -Dreport.screenshot=FILE. */
    private static void copyScreenshotIfAsked(Path png) throws IOException {
        String target = System.getProperty("report.screenshot");
        if (target != null && !target.isBlank()) {
            Files.copy(png, Path.of(target), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
