package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code coordinator} with {@code --price}, {@code --max-cost}, {@code --fail-under},
 * {@code --max-error-rate} and {@code --summary-json}, as a user types them, with one in-process
 * worker whose answers carry token usage: the exit codes, the summary's lines and its JSON, and the
 * same cost in {@code report} and {@code results} given the same prices.
 */
class CostAndGatesCommandTest {
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
    }

    @Test
    void theSummaryAndItsJsonShowTokensAndTheCostRecomputedFromTheRecordsAndFailUnderExits6() throws Exception {
        int port = startWorker(v -> answer(v, Integer.parseInt(v.id().substring(1)) % 2 == 0, null), false);
        Path json = dir.resolve("out/summary.json");

        int exit = execute(coordinator(port, 8, "--price", "m=1.5/3", "--fail-under", "0.9",
                "--summary-json", json.toString()));

        assertThat(exit).as(err.toString()).isEqualTo(CoordinatorRun.EXIT_FAIL_UNDER);
        double cost = 0;
        long prompt = 0;
        for (StoredRecord r : records()) {
            Usage u = r.record().usage();
            prompt += u.promptTokens();
            cost += (u.promptTokens() * 1.5 + u.completionTokens() * 3) / 1e6;
        }
        assertThat(out.toString()).contains(String.format(Locale.ROOT, "cost:        %.4f USD", cost))
                .contains(String.format(Locale.ROOT, "m: %.4f USD", cost))
                .contains("fail-under:  m scored 0.500, below --fail-under 0.9: exit 6");
        JsonNode summary = new ObjectMapper().readTree(json.toFile());
        assertThat(summary.get("runId").asText()).isNotBlank();
        assertThat(summary.get("exitCode").asInt()).isEqualTo(6);
        assertThat(summary.get("interval").get("method").asText()).isEqualTo("Wilson, clustered by vignette");
        assertThat(summary.get("answers").get("stored").asInt()).isEqualTo(8);
        assertThat(summary.get("cache").get("hits").asInt()).as("no --temperature 0, no cache").isZero();
        assertThat(summary.get("gates").get("below").get(0).asText()).isEqualTo("m");
        JsonNode m = summary.get("models").get(0);
        assertThat(m.get("model").asText()).isEqualTo("m");
        assertThat(m.get("accuracy").get("mean").asDouble()).isEqualTo(0.5);
        assertThat(m.get("accuracy").get("ciLow").asDouble()).isLessThan(0.5);
        assertThat(m.get("tokens").get("prompt").asLong()).isEqualTo(prompt);
        assertThat(m.get("costUsd").asDouble()).isCloseTo(cost, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(summary.get("costUsd").asDouble()).isCloseTo(cost, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void moreFailedAnswersThanMaxErrorRateAllowsExit5AndWithinItExit0() throws Exception {
        int port = startWorker(v -> answer(v, true, v.id().equals("q0") ? "HTTP 400: too long" : null), false);

        assertThat(execute(coordinator(port, 4))).as(err.toString()).isEqualTo(CoordinatorRun.EXIT_ERROR_RATE);
        assertThat(out.toString()).contains("is more than --max-error-rate 0 allows: exit 5");

        out.getBuffer().setLength(0);
        assertThat(execute(coordinator(port, 4, "--max-error-rate", "0.25"))).as(err.toString()).isZero();
    }

    @Test
    void aBudgetStopsDispatchingKeepsWhatWasStoredSaysSoAndALargerOneResumes() throws Exception {
        // Each answer costs 1 USD: 1,000,000 prompt tokens at 1 USD per million.
        int port = startWorker(v -> answer(v, true, null), true);
        Path json = dir.resolve("summary.json");

        int exit = execute(coordinator(port, 20, "--price", "m=1/0", "--max-cost", "3",
                "--summary-json", json.toString()));

        assertThat(exit).as(err.toString()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        int stored = records().size();
        assertThat(stored).isBetween(3, 19);
        assertThat(out.toString()).contains("Run INCOMPLETE")
                .contains(stored + " of 20 stored, " + (20 - stored) + " missing (not sent: the run stopped short)")
                .contains("budget:      the run stopped: the answers stored cost")
                .contains((20 - stored) + " jobs not run").contains(": exit 7");
        JsonNode summary = new ObjectMapper().readTree(json.toFile());
        assertThat(summary.get("stoppedBy").asText()).isEqualTo("budget");
        assertThat(summary.get("budget").get("spentUsd").asDouble()).isEqualTo(stored);

        out.getBuffer().setLength(0);
        assertThat(execute(coordinator(port, 20, "--price", "m=1/0", "--max-cost", "100"))).as(err.toString())
                .isZero();
        assertThat(records()).hasSize(20);
        assertThat(out.toString()).contains("20 of 20 stored").contains("budget:      20.0000 of 100.0000 USD spent");
    }

    @Test
    void aBadPriceOrAModelWithoutOneUnderABudgetIsAUsageErrorNamingIt() throws Exception {
        Path suite = QuestionSuite.write(dir, 2);
        List<String> base = List.of("coordinator", "--suite", suite.toString(), "--model", "m", "--model", "n",
                "--db", dir.resolve("r.db").toString(), "--listen", "127.0.0.1:0");

        assertThat(execute(with(base, "--price", "m=1"))).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--price' (MODEL=IN/OUT): must be MODEL=IN/OUT")
                .contains("got 'm=1'");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--price", "m=1/2", "--max-cost", "5"))).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--max-cost': no price for n;");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--fail-under", "1.5"))).isEqualTo(2);
        assertThat(err.toString()).contains("'--fail-under': must be an accuracy from 0 to 1, got 1.5");
        assertThat(dir.resolve("r.db")).as("refused before anything is opened").doesNotExist();
    }

    @Test
    void theReportAndTheResultsExportGivenTheSamePricesShowAndAddUpToTheCostTheSummaryPrints() throws Exception {
        int port = startWorker(v -> {
            int i = Integer.parseInt(v.id().substring(1));
            return new ResponseRecord(v.id(), "Answer " + i, "m", "stop", 5L, new Usage(1_234 + 97L * i, 7 + 31L * i),
                    null);
        }, false);
        String[] price = {"--price", "m=1.5/3"};
        assertThat(execute(coordinator(port, 7, price))).as(err.toString()).isZero();
        Matcher printed = Pattern.compile("cost: +(\\S+) USD").matcher(out.toString());
        assertThat(printed.find()).as(out.toString()).isTrue();
        String db = dir.resolve("r.db").toString();
        Path html = dir.resolve("report.html");

        assertThat(execute(with(List.of("report", "--db", db, "--out", html.toString()), price))).isZero();
        Matcher shown = Pattern.compile("data-metric=\"cost-total\">([^<]+)<").matcher(Files.readString(html));
        assertThat(shown.find()).isTrue();
        assertThat(shown.group(1)).isEqualTo(printed.group(1));

        RunCosts costs;
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            String run = RunDataLoader.runIds(store).get(0);
            costs = RunCosts.of(RunStats.of(RunDataLoader.load(store, run), null),
                    Prices.of(Map.of("m", new Price(1.5, 3))));
        }
        assertThat(costs.totalText()).isEqualTo(printed.group(1));
        out.getBuffer().setLength(0);
        assertThat(execute(with(List.of("results", "--db", db), price))).isZero();
        double sum = 0;
        for (String line : out.toString().split("\n")) {
            sum += new ObjectMapper().readTree(line).get(ResultsCommand.COST_COLUMN).asDouble();
        }
        assertThat(sum).isCloseTo(costs.totalUsd(), within(1e-12));

        out.getBuffer().setLength(0);
        assertThat(execute(with(List.of("results", "--db", db, "--format", "csv"), price))).isZero();
        String[] rows = out.toString().split("\r?\n");
        assertThat(rows[0]).endsWith(",scoring,cached,cachedFrom," + ResultsCommand.COST_COLUMN);
        double csvSum = 0;
        for (int r = 1; r < rows.length; r++) {
            csvSum += Double.parseDouble(rows[r].substring(rows[r].lastIndexOf(',') + 1));
        }
        assertThat(csvSum).isCloseTo(costs.totalUsd(), within(1e-12));
        out.getBuffer().setLength(0);
        assertThat(execute(List.of("results", "--db", db))).isZero();
        assertThat(out.toString()).as("no prices, no cost").doesNotContain(ResultsCommand.COST_COLUMN);
        assertThat(execute(List.of("report", "--db", db, "--prices", dir.resolve("none.json").toString())))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--prices': cannot read");
    }

    // ---- helpers ----

    private static ResponseRecord answer(Vignette v, boolean right, String error) {
        String text = error != null ? "" : right ? "Answer " + v.id().substring(1) : "wrong";
        return new ResponseRecord(v.id(), text, "m", error == null ? "stop" : null, 5L,
                new Usage(1_000_000, 10), error);
    }

    /** A worker serving model m on a free port, answering each vignette with {@code answer}; returns the port. */
    private int startWorker(Function<Vignette, ResponseRecord> answer, boolean slow) throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        JobRunner runner = job -> {
            if (slow) {
                // A model call that takes a moment, so that the run is still sending when the budget is spent.
                boolean unused = new CountDownLatch(1).await(25, TimeUnit.MILLISECONDS);
            }
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                records.add(answer.apply(v));
            }
            return new JobOutcome(job.id(), records);
        };
        WorkerLoop loop = new WorkerLoop(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), "w1", 1, runner,
                WorkerOptions.defaults().withModels(List.of("m")).withHeartbeat(Duration.ofMillis(200))
                        .withBackoff(Duration.ofMillis(20), Duration.ofMillis(100)));
        workers.add(loop);
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
        return port;
    }

    private List<String> coordinator(int port, int vignettes, String... more) throws Exception {
        Path suite = QuestionSuite.write(dir, vignettes);
        return with(List.of("coordinator", "--suite", suite.toString(), "--model", "m", "--job-size", "1",
                "--db", dir.resolve("r.db").toString(), "--listen", "127.0.0.1:" + port,
                "--wait-for-workers", "30s"), more);
    }

    private List<StoredRecord> records() {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(records::add);
        }
        return records;
    }

    private static List<String> with(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }

    private int execute(List<String> args) {
        return WorkerMain.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true),
                Map.of());
    }
}
