package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The record of a run as a user reads it back: a run interrupted and resumed keeps its first start
 * and each sitting, and gives its duration as the sum of the sittings beside the wall span, in
 * {@code runs}, {@code runs show}, the Inspect export and the lm-eval export; and a run of a subset
 * shows the subset wherever it is named. {@code eval} against the stub model API, in process.
 */
class RunRecordCommandTest {
    private static final Path SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern STARTED = Pattern.compile("(?m)^  Started:\\s+(\\S+)$");

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private StubModelServer stub;

    @BeforeEach
    void startStub() throws Exception {
        stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ofMillis(20),
                4);
    }

    @AfterEach
    void stop() {
        threads.shutdownNow();
        stub.close();
    }

    private String[] eval(Path db, String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE.toString(), "--model",
                StubModelServer.MODEL, "--model-api", stub.baseUrl().toString(), "--db", db.toString(),
                "--scorer", "numeric", "--requests", "2", "--job-size", "2"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    @Test
    void aResumedRunKeepsItsFirstStartAndEachSittingEverywhereItIsShown() throws Exception {
        Path db = dir.resolve("math.db");
        // Sitting 1: interrupted (as Ctrl-C does: the command's thread is interrupted) once some answers are in.
        StringWriter firstErr = new StringWriter();
        Future<Integer> first = threads.submit(() -> WorkerMain.run(eval(db), new PrintWriter(new StringWriter(), true),
                new PrintWriter(firstErr, true), Map.of()));
        await().atMost(Duration.ofSeconds(30)).until(() -> stub.requestCount() >= 8);
        first.cancel(true);
        await().atMost(Duration.ofSeconds(30)).until(() -> firstErr.toString().contains("interrupted:"));
        // The command returns once it has said so; wait for it to let the database go.
        await().atMost(Duration.ofSeconds(30)).until(() -> cli("runs", "--db", db.toString()).contains(" incomplete "));
        String firstShow = cli("runs", "show", "--db", db.toString(), runId(db));
        String firstStart = started(firstShow);

        StringWriter secondErr = new StringWriter();
        int exit = WorkerMain.run(eval(db), new PrintWriter(new StringWriter(), true),
                new PrintWriter(secondErr, true), Map.of());
        assertThat(exit).as("the resumed run's console:%n%s", secondErr).isZero();
        assertThat(secondErr.toString()).contains("resuming run");

        String runs = cli("runs", "--db", db.toString());
        assertThat(runs).as("runs lists the run as created at its first start")
                .contains(Instant.parse(firstStart).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
                .contains(" complete ");
        String show = cli("runs", "show", "--db", db.toString(), runId(db));
        assertThat(started(show)).as("runs show:%n%s", show).isEqualTo(firstStart);
        assertThat(show).contains("over 2 sittings (wall span ").containsPattern("Sittings:\\s+1: " + Pattern.quote(
                firstStart) + " to \\S+, [0-9.]+ s, \\d+ answers stored; 2: \\S+ to \\S+, [0-9.]+ s, \\d+ answers stored");
        Matcher answers = Pattern.compile("(\\d+) answers stored; 2: .*, (\\d+) answers stored").matcher(show);
        assertThat(answers.find()).isTrue();
        int one = Integer.parseInt(answers.group(1));
        int two = Integer.parseInt(answers.group(2));
        assertThat(one).isPositive().isLessThan(40);
        assertThat(one + two).isEqualTo(40);

        Path logs = dir.resolve("logs");
        assertThat(cli("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString())).isNotNull();
        JsonNode log;
        try (Stream<Path> files = Files.list(logs)) {
            Path file = files.filter(p -> p.toString().endsWith(".json") && !p.endsWith("listing.json")).findFirst()
                    .orElseThrow();
            log = JSON.readTree(file.toFile());
        }
        assertThat(Instant.parse(log.at("/stats/started_at").asText())).as("Inspect's times are to the second")
                .isEqualTo(Instant.parse(firstStart).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        JsonNode sittings = log.at("/eval/metadata/sittings");
        assertThat(sittings.size()).isEqualTo(2);
        assertThat(sittings.get(0).get("answers_stored").asInt()).isEqualTo(one);
        double sum = 0;
        for (JsonNode s : sittings) {
            sum += Duration.between(Instant.parse(s.get("started_at").asText()),
                    Instant.parse(s.get("ended_at").asText())).toMillis() / 1000.0;
        }
        assertThat(log.at("/eval/metadata/duration_seconds").asDouble()).isCloseTo(sum, org.assertj.core.data.Offset
                .offset(2.0));

        Path lmEval = dir.resolve("lm-eval");
        cli("export", "--db", db.toString(), "--format", "lm-eval", "--out", lmEval.toString());
        JsonNode results;
        try (Stream<Path> files = Files.walk(lmEval)) {
            results = JSON.readTree(files.filter(p -> p.getFileName().toString().startsWith("results_")).findFirst()
                    .orElseThrow().toFile());
        }
        Instant first0 = Instant.parse(firstStart);
        assertThat(results.get("start_time").asDouble()).isCloseTo(first0.getEpochSecond() + first0.getNano() / 1e9,
                org.assertj.core.data.Offset.offset(0.001));
        double lmSum = 0;
        for (JsonNode s : results.at("/panoptes/sittings")) {
            lmSum += s.get("end_time").asDouble() - s.get("start_time").asDouble();
        }
        assertThat(results.at("/panoptes/sittings").size()).isEqualTo(2);
        assertThat(Double.parseDouble(results.get("total_evaluation_time_seconds").asText()))
                .isCloseTo(lmSum, org.assertj.core.data.Offset.offset(0.01))
                .isLessThanOrEqualTo(results.at("/panoptes/wall_span_seconds").asDouble());
    }

    @Test
    void aSubsetIsShownInRunsRunsShowTheReportCardAndTheInspectConfig() throws Exception {
        Path db = dir.resolve("subset.db");
        int exit = WorkerMain.run(eval(db, "--shuffle", "7", "--limit", "5"), new PrintWriter(new StringWriter(), true),
                new PrintWriter(new StringWriter(), true), Map.of());
        assertThat(exit).isZero();

        assertThat(cli("runs", "--db", db.toString())).contains("math.jsonl [shuffled (seed 7), first 5]");
        assertThat(cli("runs", "show", "--db", db.toString(), runId(db)))
                .containsPattern("Subset:\\s+shuffled \\(seed 7\\), first 5 \\(--shuffle 7 --limit 5\\)");
        Path report = dir.resolve("report.html");
        cli("report", "--db", db.toString(), "--out", report.toString());
        assertThat(Files.readString(report)).contains("shuffled (seed 7), first 5 (--shuffle 7 --limit 5)");

        Path logs = dir.resolve("logs");
        cli("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString());
        JsonNode log;
        try (Stream<Path> files = Files.list(logs)) {
            log = JSON.readTree(files.filter(p -> p.toString().endsWith(".json") && !p.endsWith("listing.json"))
                    .findFirst().orElseThrow().toFile());
        }
        assertThat(log.at("/eval/config/limit").asInt()).isEqualTo(5);
        assertThat(log.at("/eval/config/sample_shuffle").asInt()).isEqualTo(7);
        assertThat(log.at("/eval/dataset/shuffled").asBoolean()).isTrue();
    }

    private static String started(String show) {
        Matcher m = STARTED.matcher(show);
        assertThat(m.find()).as("a Started line in:%n%s", show).isTrue();
        return m.group(1);
    }

    private String runId(Path db) {
        String runs = cli("runs", "--db", db.toString());
        return runs.lines().skip(1).findFirst().orElseThrow().split("\\s+")[0];
    }

    /** Runs a command, expecting exit 0; returns its standard output. */
    private static String cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        assertThat(exit).as("%s: %s", List.of(args), err).isZero();
        return out.toString();
    }
}
