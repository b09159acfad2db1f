package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Opens an exported Inspect log in the real Inspect log viewer ({@code @metrevals/inspect-log-viewer}
 * on npm) in headless Chromium, and reads back what a person sees: the task, the model, the
 * accuracy and the samples.
 *
 * <p>The viewer is a static page built from {@code src/test/inspect-viewer} by its
 * {@code build.sh} (npm and esbuild; Maven runs it before the tests). A loopback HTTP
 * server on an ephemeral port serves that page and, under {@code logs/}, the folder
 * {@link InspectLog} wrote, as {@code inspect view} serves a log folder; besides the report
 * fixture's logs, it holds one of a run of three epochs. Fails, saying why, when Chromium or
 * the built page is missing. Leaves a screenshot in {@code target/inspect-viewer.png}.
 *
 * <p>One Chromium and one server (one address) serve the class's tests. Each log is opened by a
 * fresh load of the page at its route, and so is the agent log's sample; other samples are routed
 * to by the fragment within the log shown (the 5 MB page loads once per log), and loaded afresh if
 * the viewer has not shown them within 5 s. A fresh load after the first is a reload of the page
 * at the new route: the renderer that compiled the viewer's script keeps it, and the load costs
 * about 0.5 s rather than the 1.2-1.8 s of a load into a new renderer (from about:blank). Routed by the fragment, the viewer (not ours) stayed on "Loading..." for the
 * agent log's sample in every run, and, on a heavily loaded machine (load 13), kept showing the
 * previous log after the fragment named another; a fresh load showed each at once.
 */
class InspectViewerBrowserTest {
    /** The viewer's page; the system property {@code inspect.viewer.dir} names another. */
    private static final Path VIEWER = Path.of(System.getProperty("inspect.viewer.dir", "src/test/inspect-viewer"));
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8",
            "json", "application/json; charset=utf-8");
    private static final Pattern RANGE = Pattern.compile("bytes=(\\d+)-(\\d*)");
    /** The shipped multiple-choice task (lm-eval's format, asked by log-likelihood). */
    private static final Path MC_TASK = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();

    @TempDir
    static Path profile;

    private static DevToolsPage page;
    /** The loopback server of the viewer's page and of the log folder {@link #served}. */
    private static HttpServer server;
    /** The log folder the test now running serves at /logs/. */
    private static volatile Path served;
    /** The viewer's address whose page the browser shows, or null. */
    private static String loaded;

    @TempDir
    Path dir;

    @BeforeAll
    static void startChromium() throws Exception {
        String chromium = chromium();
        // Fails rather than skips: a check that skips itself is a check nobody runs.
        assertThat(chromium).as("no 'chromium' on the PATH nor at /usr/bin/chromium: install Debian's package"
                + " (sudo apt-get install -y chromium; bash .ci/test, the README's test command, does this)")
                .isNotNull();
        assertThat(VIEWER.resolve("dist/viewer.js")).as("the Inspect viewer page is not built: Maven builds it"
                + " before the tests with " + VIEWER.resolve("build.sh") + ", which needs node and npm").isRegularFile();
        page = DevToolsPage.start(chromium, profile);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/logs/", exchange -> serve(exchange, served, "/logs/"));
        server.createContext("/", exchange -> serve(exchange, VIEWER, "/"));
        server.start();
    }

    @AfterAll
    static void stopChromium() {
        if (server != null) {
            server.stop(0);
        }
        if (page != null) {
            page.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theViewerShowsTheTaskTheModelTheAccuracyAndTheSamples() throws Exception {
        RunData run = InspectLogTest.withManifest(ReportFixtures.run());
        RunStats.ModelStats model = RunStats.of(run, null).model("m-b").orElseThrow();
        Path logs = dir.resolve("logs");
        String file = InspectLog.write(run, logs).get(1).getFileName().toString();
        String zip = InspectLog.write(run, logs, InspectLog.LogFormat.EVAL).get(0).getFileName().toString();
        String epochs = InspectLog.write(threeEpochs(), logs, InspectLog.LogFormat.EVAL).get(0).getFileName()
                .toString();

        String base = serveViewer(logs);
        String accuracy = shown(model.accuracy().mean());
        String stderr = shown(model.accuracy().standardError());
        // Every text asserted below is waited for: the grid fills its rows after the header.
        JsonNode shown = show(base, "/logs/" + file, List.of("capitals & <sums>", "m-b", accuracy, "6 Samples",
                "What is the capital of France?", "Name a prime above 10.", "reply 0.0", "reply 2.1"));
        String text = shown.get("text").asText();
        assertThat(shown.get("found").asBoolean()).as("the viewer shows the log; it shows:%n%s", text).isTrue();
        assertThat(text).contains("capitals & <sums>").contains("m-b").contains("exact")
                // MEAN: the epochs reducer each score names, as the config's epochs_reducer does.
                .contains("ACCURACY\nMEAN\n" + accuracy).contains("STDERR\nMEAN\n" + stderr)
                .contains("6 Samples")
                .contains("What is the capital of France?").contains("Name a prime above 10.")
                .contains("reply 0.0").contains("reply 2.1");
        // Not asserted: the viewer turns message text into HTML, and the fixture's prompt with
        // <img onerror=...> does run there (document.title becomes "img"), as the same input would
        // in any log it opens; the README says to view logs of suites you trust.
        Path target = Files.createDirectories(Path.of("target"));
        page.screenshot(target.resolve("inspect-viewer.png"));

        // One sample opened: its chat, system prompt first, and the answer. (On the messages
        // tab: the viewer picks its default tab before the sample has loaded.)
        JsonNode sample = route(base, "/logs/" + file + "/samples/sample/v3/2/messages",
                List.of("Sample v3 (Epoch 2)", "SYSTEM\n\nBe brief.", "USER\n\nName a prime above 10.",
                        "ASSISTANT\n\nreply 2.1"));
        assertThat(sample.get("found").asBoolean()).as("the viewer opens a sample; it shows:%n%s",
                sample.get("text").asText()).isTrue();

        // The .eval form of model m-a: the same header, and samples read from the zip.
        String accuracyA = shown(RunStats.of(run, null).model("m-a").orElseThrow().accuracy().mean());
        JsonNode zipShown = show(base, "/logs/" + zip, List.of("m-a", "ACCURACY\nMEAN\n" + accuracyA,
                "answer 2.1", "6 Samples"));
        assertThat(zipShown.get("found").asBoolean()).as("the viewer shows the .eval log; it shows:%n%s",
                zipShown.get("text").asText()).isTrue();

        // A log of three epochs: the viewer offers epochs 1 to 3, lists the nine samples, and
        // opens each (vignette, epoch) from its own member, samples/<id>_epoch_<epoch>.json.
        JsonNode listed = show(base, "/logs/" + epochs, List.of("m-e", "EPOCHS:\nall\n1\n2\n3\n", "9 Samples",
                "SAMPLE Q3"));
        assertThat(listed.get("found").asBoolean()).as("the viewer lists the epochs; it shows:%n%s",
                listed.get("text").asText()).isTrue();
        assertThat(listed.get("text").asText()).doesNotContain("EPOCHS:\nall\n0");
        for (String[] epoch : new String[][] {{"1", "wrong"}, {"3", "right"}}) {
            JsonNode opened = route(base, "/logs/" + epochs + "/samples/sample/q2/" + epoch[0]
                    + "/messages", List.of("Sample q2 (Epoch " + epoch[0] + ")", "USER\n\nQuestion q2",
                    "ASSISTANT\n\n" + epoch[1]));
            assertThat(opened.get("found").asBoolean()).as("the viewer opens q2's epoch %s; it shows:%n%s",
                    epoch[0], opened.get("text").asText()).isTrue();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void anExportedAgentRunShowsItsToolCallsAndOutputsInTheSamplesMessagesAndTranscript() throws Exception {
        // As a user: eval of the shipped agent suite against the stub, then export --format inspect.
        Path db = AgentRun.evalInto(dir);
        Path logs = dir.resolve("logs");
        AgentRun.cli("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString());
        String file;
        try (var listed = Files.list(logs)) {
            file = listed.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")
                    && !n.equals(InspectLog.LISTING)).findFirst().orElseThrow();
        }

        String base = serveViewer(logs);
        JsonNode listed = show(base, "/logs/" + file, List.of("agent", "8 Samples", AgentRun.PYTHON_TASK));
        assertThat(listed.get("found").asBoolean()).as("the viewer lists the agent log; it shows:%n%s",
                listed.get("text").asText()).isTrue();

        // The sample's messages: the python call with its code, the tool's output, then submit.
        String sample = "/logs/" + file + "/samples/sample/" + AgentRun.PYTHON_TASK + "/1/";
        JsonNode messages = show(base, sample + "messages", List.of("Sample " + AgentRun.PYTHON_TASK,
                AgentRun.PYTHON_CODE, AgentRun.PYTHON_OUTPUT, "submit"));
        assertThat(messages.get("found").asBoolean()).as("the viewer shows the tool call in the messages; it"
                + " shows:%n%s", messages.get("text").asText()).isTrue();

        // The transcript: the model events and the tool events, the python call's code and output.
        JsonNode transcript = route(base, sample + "transcript", List.of(AgentRun.PYTHON_CODE,
                AgentRun.PYTHON_OUTPUT, "TOOL: PYTHON", "MODEL CALL: STUB-ARITHMETIC"));
        assertThat(transcript.get("found").asBoolean()).as("the viewer shows the tool call in the transcript;"
                + " it shows:%n%s", transcript.get("text").asText()).isTrue();
        page.screenshot(Files.createDirectories(Path.of("target")).resolve("inspect-viewer-agent.png"));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void anExportedMultipleChoiceRunShowsEachSamplesChoicesTargetAnswerAndScore() throws Exception {
        // As a user: eval of the shipped multiple-choice task against the stub, then export it in both forms.
        Path db = dir.resolve("mc.db");
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(1), 16)) {
            AgentRun.cli("eval", "--task", MC_TASK.toString(), "--model", StubModelServer.MODEL, "--model-api",
                    stub.baseUrl().toString(), "--db", db.toString(), "--no-progress");
        }
        Path logs = dir.resolve("logs");
        AgentRun.cli("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString());
        AgentRun.cli("export", "--db", db.toString(), "--format", "inspect", "--log-format", "eval",
                "--out", logs.toString());
        String file = logFile(logs, ".json");
        String zip = logFile(logs, ".eval");
        // What a person should see of a sample the model got wrong and of one it got right, from the
        // task's own documents (metadata: the doc's choices and the right one's index) and the
        // answer's log-likelihoods (the model's choice: the most likely).
        JsonNode log = new com.fasterxml.jackson.databind.ObjectMapper().readTree(logs.resolve(file).toFile());
        List<Shown> wrongAndRight = new ArrayList<>();
        for (double value : new double[] {0, 1}) {
            for (JsonNode sample : log.get("samples")) {
                if (sample.get("scores").get("acc").get("value").asDouble() == value) {
                    wrongAndRight.add(Shown.of(sample));
                    break;
                }
            }
        }
        assertThat(wrongAndRight).as("the stub is wrong about some documents and right about others").hasSize(2);

        String base = serveViewer(logs);
        JsonNode listed = show(base, "/logs/" + file, List.of("arithmetic-task", StubModelServer.MODEL,
                "40 Samples", "ACCURACY\nMEAN\n0.875"));
        assertThat(listed.get("found").asBoolean()).as("the viewer lists the multiple-choice samples; it"
                + " shows:%n%s", listed.get("text").asText()).isTrue();
        page.screenshot(Files.createDirectories(Path.of("target")).resolve("inspect-viewer-choice.png"));
        for (String[] form : new String[][] {{file, "json"}, {zip, "eval"}}) {
            boolean loaded = form[0].equals(file);
            for (Shown expected : wrongAndRight) {
                String at = "/logs/" + form[0] + "/samples/sample/" + expected.id() + "/1/messages";
                // Within the log loaded last, by the fragment; into the other log, a fresh load.
                JsonNode opened = loaded ? route(base, at, expected.needles()) : show(base, at, expected.needles());
                loaded = true;
                assertThat(opened.get("found").asBoolean()).as("the viewer (%s log) shows sample %s's choices,"
                        + " target %s, answer %s and score %s; it shows:%n%s", form[1], expected.id(),
                        expected.target(), expected.answer(), expected.score(), opened.get("text").asText())
                        .isTrue();
            }
        }
    }

    /** The one log of {@code logs} whose name ends so. */
    private static String logFile(Path logs, String suffix) throws IOException {
        try (var listed = Files.list(logs)) {
            return listed.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(suffix)
                    && !n.equals(InspectLog.LISTING)).findFirst().orElseThrow();
        }
    }

    /**
     * What the viewer should show of one multiple-choice sample, worked out from the document and
     * the answer's log-likelihoods rather than from the export's own choice fields.
     */
    record Shown(String id, List<String> choices, String target, String answer, String score) {
        static Shown of(JsonNode sample) {
            JsonNode metadata = sample.get("metadata");
            List<String> choices = new ArrayList<>();
            metadata.get("choices").forEach(c -> choices.add(c.asText()));
            JsonNode lls = metadata.get("panoptes").get("loglikelihoods");
            int chosen = 0;
            for (int i = 1; i < lls.size(); i++) {
                if (lls.get(i).get(0).asDouble() > lls.get(chosen).get(0).asDouble()) {
                    chosen = i;
                }
            }
            String score = sample.get("scores").get("acc").get("value").asDouble() == 1 ? "1" : "0";
            return new Shown(sample.get("id").asText(), choices,
                    String.valueOf((char) ('A' + metadata.get("answer").asInt())),
                    String.valueOf((char) ('A' + chosen)),
                    score);
        }

        /**
         * The sample's header as the viewer shows it (ID, INPUT, TARGET, ANSWER, TIME, SCORE): the
         * input ends with the choices, lettered and run together ({@code A) 712 B) 702 ...}), then
         * come the target's letter and the answer's; the score follows the time, then the tabs; and
         * the messages tab holds the model's {@code ANSWER: X}.
         */
        List<String> needles() {
            StringBuilder lettered = new StringBuilder();
            for (int i = 0; i < choices.size(); i++) {
                lettered.append(i == 0 ? "" : " ").append((char) ('A' + i)).append(") ").append(choices.get(i));
            }
            return List.of("Sample " + id + " (Epoch 1)", "ID\nINPUT\nTARGET\nANSWER\nTIME\nSCORE\n" + id + "\n",
                    lettered + "\n\n" + target + "\n\n" + answer + "\n\n", " sec\n" + score + "\nTRANSCRIPT",
                    "ASSISTANT\n\nANSWER: " + answer);
        }
    }

    /**
     * A run of model m-e asking three vignettes in three epochs, stored as a run stores them
     * (epochs 0, 1, 2); q2 is answered wrong, wrong, then right.
     */
    static RunData threeEpochs() {
        List<SampleRow> samples = new ArrayList<>();
        double[][] scores = {{1, 1, 1}, {0, 0, 1}, {0, 1, 0}};
        for (int v = 0; v < 3; v++) {
            for (int e = 0; e < 3; e++) {
                String id = "q" + (v + 1);
                samples.add(new SampleRow("r-3", "m-e", e, id, "r-3-m-e-e" + e + "-000" + v, "user: Question " + id,
                        "right", scores[v][e] == 1 ? "right" : "wrong", scores[v][e], null, Map.of(), "w-1", "m-e",
                        100L, 5L, 1L, "stop"));
            }
        }
        RunInfo plain = new RunInfo("r-3", "evals/epochs.jsonl", List.of("m-e"), "exact", 3,
                ReportFixtures.STARTED, 3);
        return InspectLogTest.withManifest(new RunData(plain, samples, List.of(), List.of()));
    }

    /** A figure as the viewer shows it: rounded to three decimals, without trailing zeros (0.5, 0.833). */
    private static String shown(double value) {
        return BigDecimal.valueOf(value).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString();
    }

    /**
     * Loads the viewer at a route ({@code #/logs/...}) and waits, at most 20 s, until the page's
     * text holds every needle: the viewer loads the log after the page's load event. Returns
     * {@code {found, text}}. A navigation to the same page with another fragment would stay in the
     * document (no load event, nothing reloaded): so the page shown is given the route without
     * routing ({@code history.replaceState}) and reloaded; the first load goes via a blank page.
     */
    private static JsonNode show(String base, String route, List<String> needles) throws Exception {
        if (base.equals(loaded)) {
            page.evaluate("history.replaceState(null, '', '#" + route + "')");
            page.reload();
        } else {
            page.open("about:blank");
            page.open(base + "#" + route);
            loaded = base;
        }
        return page.awaitPromise(untilShown(needles, 20_000));
    }

    /**
     * Goes to a route within the log the page shows, by the fragment, as a person's click does
     * (the 5 MB page is not loaded again), and waits until the page's text holds every needle. A
     * route the viewer has not shown within 5 s is loaded afresh ({@link #show}), saying so on
     * standard output: routed so, the viewer (not ours) has been seen to stay on "Loading...".
     */
    private static JsonNode route(String base, String route, List<String> needles) throws Exception {
        page.evaluate("location.hash = '#" + route + "'");
        JsonNode shown = page.awaitPromise(untilShown(needles, 5_000));
        if (shown.get("found").asBoolean()) {
            return shown;
        }
        System.out.println("the viewer did not show " + route + " within 5 s of routing to it; loading it afresh");
        return show(base, route, needles);
    }

    /** A promise resolving, once the page's text holds every needle or after {@code millis}, to {@code {found, text}}. */
    private static String untilShown(List<String> needles, int millis) throws IOException {
        String json = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(needles);
        return "new Promise(function (resolve) { var needles = " + json + "; var deadline = Date.now() + " + millis + ";"
                + " (function check() { var text = document.body.innerText;"
                + " var found = needles.every(function (n) { return text.indexOf(n) >= 0; });"
                + " if (found || Date.now() > deadline) { resolve({found: found, text: text}); }"
                + " else { setTimeout(check, 50); } })(); })";
    }

    /**
     * Serves {@code logs} at /logs/ from now on, beside the viewer's page at /, on the class's
     * loopback server; returns the server's address. One address for the class: the browser
     * reloads the viewer's page there rather than loading it into a new renderer.
     */
    private static String serveViewer(Path logs) {
        served = logs;
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/";
    }

    private static void serve(HttpExchange exchange, Path root, String prefix) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath().substring(prefix.length());
            Path file = root.resolve(path.isEmpty() ? "index.html" : path).normalize();
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            if (!head && !"GET".equals(exchange.getRequestMethod()) || !file.startsWith(root.normalize())
                    || !Files.isRegularFile(file)) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            String name = file.getFileName().toString();
            String type = TYPES.getOrDefault(name.substring(name.lastIndexOf('.') + 1), "application/octet-stream");
            exchange.getResponseHeaders().set("Content-Type", type);
            if (root != VIEWER) {
                // Each test serves its own logs at the same address: none is kept for the next.
                exchange.getResponseHeaders().set("Cache-Control", "no-store");
            }
            byte[] content = Files.readAllBytes(file);
            if (head) {
                // The .eval reader asks for the size first.
                exchange.getResponseHeaders().set("Content-Length", String.valueOf(content.length));
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            // ... and then for the zip's parts by byte range, as a static file server serves them.
            Matcher range = RANGE.matcher(String.valueOf(exchange.getRequestHeaders().getFirst("Range")));
            int from = 0;
            int to = content.length - 1;
            if (range.matches()) {
                from = Integer.parseInt(range.group(1));
                to = range.group(2).isEmpty() ? to : Math.min(to, Integer.parseInt(range.group(2)));
                exchange.getResponseHeaders().set("Content-Range", "bytes " + from + "-" + to + "/" + content.length);
            }
            exchange.sendResponseHeaders(range.matches() ? 206 : 200, to - from + 1);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(content, from, to - from + 1);
            }
        }
    }

    /** Chromium from the PATH, else Debian's /usr/bin/chromium; null when there is none. */
    private static String chromium() {
        String path = System.getenv("PATH");
        for (String entry : (path == null ? "" : path).split(File.pathSeparator)) {
            File candidate = new File(entry, "chromium");
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate.getPath();
            }
        }
        File debian = new File("/usr/bin/chromium");
        return debian.isFile() && debian.canExecute() ? debian.getPath() : null;
    }
}
