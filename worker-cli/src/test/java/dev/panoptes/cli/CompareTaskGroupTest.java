package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.stats.StudentT;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.report.Figures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code compare} of two runs of the shipped lm-eval group file (one per stub model): per
 * multiple-choice metric the paired difference over every shared document, per task and over the
 * tasks each counted once, on the console, in {@code --json} and in the HTML report; every figure
 * recomputed here from the runs' {@code export --format lm-eval} per-document lines.
 */
class CompareTaskGroupTest {
    private static final Path GROUP = Path.of("..", "evals", "basic-skills-group.yaml").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> METRICS = List.of("acc", "acc_norm", "acc_bytes");
    private static final List<String> TASKS = List.of("arithmetic_mc", "units_mc");

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void twoRunsOfAGroupAreComparedPerMetricPerTaskAndOverTheTasksAsTheExportRecomputes() throws Exception {
        Path db = dir.resolve("g.db");
        EvalRun big = stub.eval("--task", GROUP.toString(), "--db", db.toString());
        EvalRun small = EvalRun.of("eval", "--task", GROUP.toString(), "--db", db.toString(), "--model",
                StubModelServer.SMALL_MODEL, "--model-api=" + stub.baseUrl());
        assertThat(big.exit()).as(big.console()).isZero();
        assertThat(small.exit()).as(small.console()).isZero();
        String first = big.runId();
        String second = small.runId();

        EvalRun text = EvalRun.of("compare", "--db", db.toString(), "--run", first, "--run", second, "--show", "0");
        Path html = dir.resolve("compare.html");
        EvalRun json = EvalRun.of("compare", "--db", db.toString(), "--run", first, "--run", second, "--json",
                "--out", html.toString());
        assertThat(text.exit()).as(text.console()).isZero();
        assertThat(json.exit()).as(json.console()).isZero();

        // Each document's metrics, recomputed from its exported log-likelihoods, by model.
        Map<String, Doc> base = export(db, first, StubModelServer.MODEL);
        Map<String, Doc> other = export(db, second, StubModelServer.SMALL_MODEL);
        assertThat(base).hasSize(64);
        assertThat(other.keySet()).isEqualTo(base.keySet());

        String pair = StubModelServer.SMALL_MODEL + " (run " + second + ") - " + StubModelServer.MODEL + " (run "
                + first + ")";
        String console = text.out();
        assertThat(console).contains("  " + pair + ": ")
                .contains("    per metric (multiple choice, recomputed from the answers' log-likelihoods; the mean of"
                        + " the task groups: " + PairedDifference.MEAN_METHOD + "):\n");
        JsonNode comparison = JSON.readTree(json.out()).get("comparisons").get(0);
        JsonNode metrics = comparison.get("metrics");
        assertThat(metrics).hasSize(METRICS.size());
        String page = Files.readString(html);
        assertThat(page).contains("<table class=\"compare-metrics\">");

        Map<String, double[]> overall = new HashMap<>();
        for (int i = 0; i < METRICS.size(); i++) {
            String metric = METRICS.get(i);
            Map<String, List<Double>> byTask = new TreeMap<>();
            List<Double> all = new ArrayList<>();
            for (Map.Entry<String, Doc> e : base.entrySet()) {
                Doc b = e.getValue();
                Doc o = other.get(e.getKey());
                assertThat(o.prompt()).isEqualTo(b.prompt());
                double d = o.value(metric) - b.value(metric);
                all.add(d);
                byTask.computeIfAbsent(b.task(), t -> new ArrayList<>()).add(d);
            }
            assertThat(byTask.keySet()).containsExactlyElementsOf(TASKS);
            double[] pooled = pairedT(all);
            double[] arithmetic = pairedT(byTask.get("arithmetic_mc"));
            double[] units = pairedT(byTask.get("units_mc"));
            double[] mean = meanOverTasks(arithmetic, units, 40, 24);
            overall.put(metric, pooled);

            // The console: the metric over all 64 documents, each task, and the tasks' mean.
            assertThat(console).contains("      " + metric + ": " + format(pooled, 64) + "\n")
                    .contains("        task=arithmetic_mc: " + format(arithmetic, 40) + "\n")
                    .contains("        task=units_mc: " + format(units, 24) + "\n");
            String block = console.substring(console.indexOf("      " + metric + ": "));
            assertThat(block).contains("        mean of the 2 task groups, each counted once: " + format(mean, 64)
                    + "\n");

            // The JSON: the same numbers, unrounded.
            JsonNode m = metrics.get(i);
            assertThat(m.get("metric").asText()).isEqualTo(metric);
            assertThat(m.get("groupBy").asText()).isEqualTo("task");
            assertFigures(m, pooled, 64);
            assertThat(m.get("groups")).hasSize(2);
            assertThat(m.get("groups").get(0).get("group").asText()).isEqualTo("arithmetic_mc");
            assertFigures(m.get("groups").get(0), arithmetic, 40);
            assertThat(m.get("groups").get(1).get("group").asText()).isEqualTo("units_mc");
            assertFigures(m.get("groups").get(1), units, 24);
            assertThat(m.get("groupMean").get("method").asText()).isEqualTo(PairedDifference.MEAN_METHOD);
            assertFigures(m.get("groupMean"), mean, 64);

            // The HTML: the same figures as the console prints them.
            assertCells(page, metric, "all", pooled, 64);
            assertCells(page, metric, "arithmetic_mc", arithmetic, 40);
            assertCells(page, metric, "units_mc", units, 24);
            assertCells(page, metric, "mean", mean, 64);
        }
        // The run's own figure is acc: the pair's headline difference is acc's over all documents.
        assertThat(console).contains("  " + pair + ": " + format(overall.get("acc"), 64) + "\n");
        assertThat(comparison.get("difference").asDouble()).isCloseTo(overall.get("acc")[0], within(1e-12));
        // acc and acc_norm pick different choices on some documents: the metrics are not copies.
        assertThat(overall.get("acc_norm")[0]).isNotEqualTo(overall.get("acc")[0]);

        // --group-by names another key: the arithmetic documents' operation (the units ones have none).
        EvalRun byOperation = EvalRun.of("compare", "--db", db.toString(), "--run", first, "--run", second,
                "--group-by", "operation", "--show", "0");
        assertThat(byOperation.exit()).as(byOperation.console()).isZero();
        Map<String, List<Double>> byOp = new TreeMap<>();
        for (Map.Entry<String, Doc> e : base.entrySet()) {
            byOp.computeIfAbsent(e.getValue().operation(), k -> new ArrayList<>())
                    .add(other.get(e.getKey()).value("acc") - e.getValue().value("acc"));
        }
        assertThat(byOp).containsKey("(none)").hasSizeGreaterThan(2);
        String accBlock = byOperation.out().substring(byOperation.out().indexOf("      acc: "));
        for (Map.Entry<String, List<Double>> op : byOp.entrySet()) {
            assertThat(accBlock).contains("        operation=" + op.getKey() + ": ");
        }
        assertThat(accBlock).contains("        mean of the " + byOp.size() + " operation groups, each counted once: ")
                .doesNotContain("task=");
    }

    /** What the export says of one document: its task, operation and prompt, and each metric recomputed. */
    private record Doc(String task, String operation, String prompt, Map<String, Double> values) {
        double value(String metric) {
            return values.get(metric);
        }
    }

    /**
     * The run's lm-eval export for one model, by document id: acc, acc_norm and acc_bytes from each
     * choice's log-likelihood (the highest; per character; per UTF-8 byte; the first of equals),
     * checked against the acc and acc_norm lm-eval's lines carry.
     */
    private Map<String, Doc> export(Path db, String run, String model) throws Exception {
        Path out = dir.resolve("export-" + run);
        EvalRun export = EvalRun.of("export", "--db", db.toString(), "--run", run, "--format", "lm-eval", "--out",
                out.toString());
        assertThat(export.exit()).as(export.console()).isZero();
        Path samples;
        try (Stream<Path> files = Files.list(out.resolve(model))) {
            samples = files.filter(p -> p.getFileName().toString().startsWith("samples_")).findFirst().orElseThrow();
        }
        Map<String, Doc> docs = new TreeMap<>();
        for (String l : Files.readAllLines(samples)) {
            JsonNode line = JSON.readTree(l);
            JsonNode doc = line.get("doc");
            JsonNode choices = doc.get("metadata").get("choices");
            int target = Integer.parseInt(line.get("target").asText());
            int[] best = new int[3];
            double[] bestValue = {Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY};
            for (int c = 0; c < choices.size(); c++) {
                double ll = Double.parseDouble(line.get("filtered_resps").get(c).get(0).asText());
                String choice = choices.get(c).asText();
                double[] value = {ll, ll / choice.codePointCount(0, choice.length()),
                    ll / choice.getBytes(StandardCharsets.UTF_8).length};
                for (int k = 0; k < 3; k++) {
                    if (value[k] > bestValue[k]) {
                        bestValue[k] = value[k];
                        best[k] = c;
                    }
                }
            }
            Map<String, Double> values = new HashMap<>();
            for (int k = 0; k < 3; k++) {
                values.put(METRICS.get(k), best[k] == target ? 1.0 : 0.0);
            }
            assertThat(line.get("acc").asDouble()).isEqualTo(values.get("acc"));
            assertThat(line.get("acc_norm").asDouble()).isEqualTo(values.get("acc_norm"));
            JsonNode operation = doc.get("metadata").get("operation");
            docs.put(doc.get("id").asText(), new Doc(doc.get("metadata").get("task").asText(),
                    operation == null ? "(none)" : operation.asText(), doc.get("prompt").asText(), values));
        }
        return docs;
    }

    /** {mean, SE, CI low, CI high, p}: the paired t over documents, the interval clipped to [-1, 1]. */
    private static double[] pairedT(List<Double> d) {
        int n = d.size();
        double mean = d.stream().mapToDouble(Double::doubleValue).sum() / n;
        double squares = d.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum();
        double se = Math.sqrt(squares / (n - 1)) / Math.sqrt(n);
        return interval(mean, se, n - 1);
    }

    /**
     * The tasks' mean, each counted once: SE sqrt(SE_a^2 + SE_u^2) / 2, Student's t with
     * Welch-Satterthwaite degrees of freedom.
     */
    private static double[] meanOverTasks(double[] a, double[] u, int na, int nu) {
        double variance = a[1] * a[1] + u[1] * u[1];
        double df = variance * variance / (Math.pow(a[1], 4) / (na - 1) + Math.pow(u[1], 4) / (nu - 1));
        return interval((a[0] + u[0]) / 2, Math.sqrt(variance) / 2, df);
    }

    private static double[] interval(double mean, double se, double df) {
        assertThat(se).as("the stub's models disagree on some documents of each task").isPositive();
        double half = StudentT.quantile(0.975, df) * se;
        return new double[]{mean, se, Math.max(-1, mean - half), Math.min(1, mean + half),
            StudentT.twoSidedP(mean / se, df)};
    }

    /** As the console prints a paired difference. */
    private static String format(double[] f, int vignettes) {
        return new PairedDifference(vignettes, f[0], f[1], f[2], f[3], f[4]).format();
    }

    private static void assertFigures(JsonNode node, double[] f, int vignettes) {
        assertThat(node.get("sharedVignettes").asInt()).isEqualTo(vignettes);
        assertThat(node.get("difference").asDouble()).isCloseTo(f[0], within(1e-12));
        assertThat(node.get("standardError").asDouble()).isCloseTo(f[1], within(1e-12));
        assertThat(node.get("ciLow").asDouble()).isCloseTo(f[2], within(1e-9));
        assertThat(node.get("ciHigh").asDouble()).isCloseTo(f[3], within(1e-9));
        assertThat(node.get("pValue").asDouble()).isCloseTo(f[4], within(1e-9));
    }

    private static void assertCells(String page, String metric, String group, double[] f, int vignettes) {
        assertThat(cell(page, metric, group, "shared")).isEqualTo(Integer.toString(vignettes));
        assertThat(cell(page, metric, group, "difference")).isEqualTo(Figures.difference(f[0]));
        assertThat(cell(page, metric, group, "stderr")).isEqualTo(Figures.ratio(f[1]));
        assertThat(cell(page, metric, group, "ci-low")).isEqualTo(Figures.difference(f[2]));
        assertThat(cell(page, metric, group, "ci-high")).isEqualTo(Figures.difference(f[3]));
        assertThat(cell(page, metric, group, "p-value")).isEqualTo(PairedDifference.p(f[4]));
    }

    private static String cell(String page, String metric, String group, String column) {
        Matcher m = Pattern.compile("<td class=\"num\" data-pair=\"0\" data-score=\"" + Pattern.quote(metric)
                + "\" data-group=\"" + Pattern.quote(group) + "\" data-metric=\"" + column + "\">([^<]*)</td>")
                .matcher(page);
        assertThat(m.find()).as("%s %s %s in the comparison table", metric, group, column).isTrue();
        return m.group(1);
    }

    @Test
    void twoRunsOfALoglikelihoodTaskAreComparedByAccAloneSinceAContinuationHasNoAccNorm() throws Exception {
        Path lambada = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai.yaml")
                .toAbsolutePath().normalize();
        String docs = lambada.resolveSibling("lambada_openai_test.jsonl").toString();
        Path db = dir.resolve("l.db");
        EvalRun big = stub.eval("--task", lambada.toString(), "--dataset-file", docs, "--db", db.toString());
        EvalRun small = EvalRun.of("eval", "--task", lambada.toString(), "--dataset-file", docs, "--db", db.toString(),
                "--model", StubModelServer.SMALL_MODEL, "--model-api=" + stub.baseUrl());
        assertThat(big.exit()).as(big.console()).isZero();
        assertThat(small.exit()).as(small.console()).isZero();

        EvalRun json = EvalRun.of("compare", "--db", db.toString(), "--run", big.runId(), "--run",
                small.runId(), "--json");

        assertThat(json.exit()).as(json.console()).isZero();
        JsonNode metrics = JSON.readTree(json.out()).get("comparisons").get(0).get("metrics");
        // acc_norm and acc_bytes pick among choices: one continuation would score 1 whatever the model.
        assertThat(metrics).hasSize(1);
        assertThat(metrics.get(0).get("metric").asText()).isEqualTo("acc");
    }

}
