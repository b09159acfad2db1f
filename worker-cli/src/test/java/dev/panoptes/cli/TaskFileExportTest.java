package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code export --format lm-eval} of task-file runs against the stub model, read as a script
 * reads lm-eval's files: a multiple-choice task's lines carry lm-eval's request per choice,
 * {@code [loglikelihood, is_greedy]} per choice, acc and acc_norm, and every figure in the
 * results is recomputed here from the lines alone; a generate_until task's figure is
 * {@code exact_match}, the mean of its lines; a loglikelihood task's (lm-eval's own
 * lambada_openai.yaml) has one request and {@code [[ll, is_greedy]]} per line, and
 * {@code perplexity} and {@code acc} recomputed from the lines as lm-eval aggregates them.
 */
class TaskFileExportTest {
    private static final Path TASK = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void aMultipleChoiceTasksExportHasLmEvalsChoiceLinesAndFiguresRecomputableFromThem() throws Exception {
        Path db = dir.resolve("mc.db");
        assertThat(run("eval", "--task", TASK.toString(), "--db", db.toString(), "--model", StubModelServer.MODEL,
                "--model-api=" + stub.baseUrl())).isZero();
        assertThat(run("export", "--db", db.toString(), "--format", "lm-eval", "--out", dir.resolve("out").toString()))
                .isZero();

        Path folder = dir.resolve("out").resolve(StubModelServer.MODEL);
        JsonNode results = JSON.readTree(only(folder, "results_").toFile());
        List<JsonNode> lines = new ArrayList<>();
        for (String l : Files.readAllLines(only(folder, "samples_"))) {
            lines.add(JSON.readTree(l));
        }
        assertThat(lines).hasSize(40);

        double[] acc = new double[lines.size()];
        double[] accNorm = new double[lines.size()];
        for (int d = 0; d < lines.size(); d++) {
            JsonNode line = lines.get(d);
            JsonNode choices = line.path("doc").path("metadata").path("choices");
            int target = Integer.parseInt(line.path("target").asText());
            assertThat(line.path("metrics").toString()).isEqualTo("[\"acc\",\"acc_norm\"]");
            // One request per choice: (context, delimiter + choice).
            assertThat(line.path("arguments").size()).isEqualTo(choices.size());
            for (int i = 0; i < choices.size(); i++) {
                JsonNode args = line.path("arguments").path("gen_args_" + i);
                assertThat(args.path("arg_0").asText()).isEqualTo(line.path("doc").path("prompt").asText());
                assertThat(args.path("arg_1").asText()).isEqualTo(" " + choices.get(i).asText());
            }
            // resps: per choice, the list of its repeats' (ll, is_greedy), as lm-eval's str() writes them;
            // filtered_resps: per choice, take_first's one pair.
            assertThat(line.path("resps").size()).isEqualTo(choices.size());
            assertThat(line.path("filtered_resps").size()).isEqualTo(choices.size());
            int best = 0;
            int bestNorm = 0;
            double bestLl = Double.NEGATIVE_INFINITY;
            double bestPerChar = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < choices.size(); i++) {
                JsonNode pair = line.path("filtered_resps").get(i);
                assertThat(line.path("resps").get(i).size()).as("one repeat").isEqualTo(1);
                assertThat(line.path("resps").get(i).get(0)).isEqualTo(pair);
                assertThat(pair.get(0).isTextual()).isTrue();
                assertThat(pair.get(1).asText()).isIn("True", "False");
                double ll = Double.parseDouble(pair.get(0).asText());
                double perChar = ll / choices.get(i).asText().length();
                if (ll > bestLl) {
                    bestLl = ll;
                    best = i;
                }
                if (perChar > bestPerChar) {
                    bestPerChar = perChar;
                    bestNorm = i;
                }
            }
            acc[d] = best == target ? 1 : 0;
            accNorm[d] = bestNorm == target ? 1 : 0;
            assertThat(line.path("acc").asDouble()).as("doc %d acc", d).isEqualTo(acc[d]);
            assertThat(line.path("acc_norm").asDouble()).as("doc %d acc_norm", d).isEqualTo(accNorm[d]);
        }

        String task = results.path("results").fieldNames().next();
        JsonNode figures = results.path("results").path(task);
        assertThat(figures.path("acc,none").asDouble()).isCloseTo(mean(acc), within(1e-12));
        assertThat(figures.path("acc_stderr,none").asDouble()).isCloseTo(stderr(acc), within(1e-12));
        assertThat(figures.path("acc_norm,none").asDouble()).isCloseTo(mean(accNorm), within(1e-12));
        assertThat(figures.path("acc_norm_stderr,none").asDouble()).isCloseTo(stderr(accNorm), within(1e-12));
        assertThat(mean(acc)).as("the stub favours the right choice most of the time").isGreaterThan(0.6);
        JsonNode config = results.path("configs").path(task);
        assertThat(config.path("output_type").asText()).isEqualTo("multiple_choice");
        assertThat(config.path("metric_list").findValuesAsText("metric")).containsExactly("acc", "acc_norm");
        assertThat(results.path("higher_is_better").path(task).path("acc_norm").asBoolean()).isTrue();
    }

    @Test
    void anInspectExportOfAMultipleChoiceTaskShowsEachSamplesChoicesTargetAndTheChosenLetter() throws Exception {
        Path db = dir.resolve("mc.db");
        assertThat(run("eval", "--task", TASK.toString(), "--db", db.toString(), "--model", StubModelServer.MODEL,
                "--model-api=" + stub.baseUrl())).isZero();
        Path out = dir.resolve("logs");
        assertThat(run("export", "--db", db.toString(), "--format", "inspect", "--out", out.toString())).isZero();

        Path log;
        try (Stream<Path> files = Files.list(out)) {
            log = files.filter(p -> p.toString().endsWith(".json") && !p.endsWith("listing.json")).findFirst()
                    .orElseThrow();
        }
        JsonNode samples = JSON.readTree(log.toFile()).path("samples");
        assertThat(samples.size()).isEqualTo(40);
        int right = 0;
        Map<String, String> letters = new java.util.HashMap<>();
        for (JsonNode sample : samples) {
            JsonNode doc = sample.path("metadata");
            List<String> texts = new ArrayList<>();
            doc.path("choices").forEach(c -> texts.add(c.asText()));
            List<String> shown = new ArrayList<>();
            sample.path("choices").forEach(c -> shown.add(c.asText()));
            assertThat(shown).as("sample %s", sample.path("id")).isEqualTo(texts);
            String target = String.valueOf((char) ('A' + doc.path("answer").asInt()));
            assertThat(sample.path("target").asText()).isEqualTo(target);
            String chosen = sample.path("scores").path("acc").path("answer").asText();
            assertThat(chosen).matches("[A-D]");
            assertThat(sample.path("output").path("completion").asText()).isEqualTo("ANSWER: " + chosen);
            // The letter is the choice of highest log-likelihood, as the stored answer says.
            JsonNode lls = doc.path("panoptes").path("loglikelihoods");
            int best = 0;
            for (int i = 1; i < lls.size(); i++) {
                if (lls.get(i).get(0).asDouble() > lls.get(best).get(0).asDouble()) {
                    best = i;
                }
            }
            assertThat(chosen).isEqualTo(String.valueOf((char) ('A' + best)));
            assertThat(sample.path("scores").path("acc").path("value").asDouble())
                    .isEqualTo(chosen.equals(target) ? 1.0 : 0.0);
            right += chosen.equals(target) ? 1 : 0;
            letters.put(sample.path("id").asText(), chosen);
        }
        assertThat(right).isGreaterThan(20);
        // The scores reduced over epochs name the same letter (not the stored log-likelihoods).
        JsonNode reduced = JSON.readTree(log.toFile()).path("reductions").get(0).path("samples");
        assertThat(reduced.size()).isEqualTo(40);
        reduced.forEach(r -> assertThat(r.path("answer").asText()).as("sample %s", r.path("sample_id"))
                .isEqualTo(letters.get(r.path("sample_id").asText())));

        // The .eval form: each sample's summary carries its choices, as Inspect's EvalSampleSummary does.
        Path zipped = dir.resolve("eval-logs");
        assertThat(run("export", "--db", db.toString(), "--format", "inspect", "--log-format", "eval", "--out",
                zipped.toString())).isZero();
        Path archive;
        try (Stream<Path> files = Files.list(zipped)) {
            archive = files.filter(p -> p.toString().endsWith(".eval")).findFirst().orElseThrow();
        }
        try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(archive.toFile())) {
            JsonNode summaries = JSON.readTree(zip.getInputStream(zip.getEntry("summaries.json")));
            assertThat(summaries.size()).isEqualTo(40);
            for (JsonNode summary : summaries) {
                List<String> texts = new ArrayList<>();
                summary.path("metadata").path("choices").forEach(c -> texts.add(c.asText()));
                List<String> shown = new ArrayList<>();
                summary.path("choices").forEach(c -> shown.add(c.asText()));
                assertThat(shown).as("summary of sample %s", summary.path("id")).isNotEmpty().isEqualTo(texts);
            }
        }
    }

    @Test
    void aGenerationTasksExportIsExactMatchTheMeanOfItsLines() throws Exception {
        Path yaml = dir.resolve("gen.yaml");
        Files.writeString(yaml, String.join("\n", "task: arith_gen", "dataset_path: json", "dataset_kwargs:",
                "  data_files:", "    test: " + TASK.resolveSibling("arithmetic-task.jsonl"), "test_split: test",
                "output_type: generate_until", "doc_to_text: \"{{question}}\"",
                "doc_to_target: \"{{choices[answer]}}\"", "generation_kwargs:", "  until: [\"\\n\\n\"]",
                "filter_list:", "  - name: num", "    filter:", "      - function: regex",
                "        regex_pattern: \"(-?[0-9]+)\"", "metric_list:", "  - metric: exact_match", ""));
        Path db = dir.resolve("gen.db");
        assertThat(run("eval", "--task", yaml.toString(), "--db", db.toString(), "--model", StubModelServer.MODEL,
                "--model-api=" + stub.baseUrl())).isZero();
        assertThat(run("export", "--db", db.toString(), "--format", "lm-eval", "--out", dir.resolve("out").toString()))
                .isZero();

        Path folder = dir.resolve("out").resolve(StubModelServer.MODEL);
        JsonNode results = JSON.readTree(only(folder, "results_").toFile());
        List<String> raw = Files.readAllLines(only(folder, "samples_"));
        double[] em = new double[raw.size()];
        for (int d = 0; d < raw.size(); d++) {
            JsonNode line = JSON.readTree(raw.get(d));
            assertThat(line.path("metrics").toString()).isEqualTo("[\"exact_match\"]");
            assertThat(line.has("acc")).isFalse();
            em[d] = line.path("exact_match").asDouble();
            assertThat(line.path("resps").get(0).get(0).isTextual()).as("a generation's text").isTrue();
        }
        JsonNode figures = results.path("results").path(results.path("results").fieldNames().next());
        assertThat(raw).hasSize(40);
        assertThat(figures.has("acc,none")).isFalse();
        assertThat(figures.path("exact_match,none").asDouble()).isCloseTo(mean(em), within(1e-12)).isGreaterThan(0.5);
        assertThat(figures.path("exact_match_stderr,none").asDouble()).isCloseTo(stderr(em), within(1e-12));
        JsonNode config = results.path("configs").path(results.path("results").fieldNames().next());
        assertThat(config.path("output_type").asText()).isEqualTo("generate_until");
        assertThat(config.path("metric_list").findValuesAsText("metric")).containsExactly("exact_match");
    }

    @Test
    void aLoglikelihoodTasksExportHasLmEvalsLoglikelihoodLinesAndPerplexityRecomputableFromThem() throws Exception {
        Path lambada = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai.yaml")
                .toAbsolutePath().normalize();
        Path docs = lambada.resolveSibling("lambada_openai_test.jsonl");
        Path db = dir.resolve("ll.db");
        assertThat(run("eval", "--task", lambada.toString(), "--dataset-file", docs.toString(), "--db", db.toString(),
                "--model", StubModelServer.MODEL, "--model-api=" + stub.baseUrl())).isZero();
        assertThat(run("export", "--db", db.toString(), "--format", "lm-eval", "--out", dir.resolve("out").toString()))
                .isZero();

        Path folder = dir.resolve("out").resolve(StubModelServer.MODEL);
        JsonNode results = JSON.readTree(only(folder, "results_").toFile());
        List<String> raw = Files.readAllLines(only(folder, "samples_"));
        assertThat(raw).hasSize(5);
        double[] ll = new double[raw.size()];
        double[] acc = new double[raw.size()];
        for (int d = 0; d < raw.size(); d++) {
            JsonNode line = JSON.readTree(raw.get(d));
            String text = line.path("doc").path("metadata").path("text").asText();
            String last = " " + text.substring(text.lastIndexOf(' ') + 1);
            assertThat(line.path("metrics").toString()).isEqualTo("[\"perplexity\",\"acc\"]");
            // lm-eval's target for loglikelihood is doc_to_target: the continuation, its own space first.
            assertThat(line.path("target").asText()).isEqualTo(last);
            // One request: (context, continuation), no delimiter between them.
            assertThat(line.path("arguments").size()).isEqualTo(1);
            JsonNode args = line.path("arguments").path("gen_args_0");
            assertThat(args.path("arg_0").asText()).isEqualTo(text.substring(0, text.lastIndexOf(' ')));
            assertThat(args.path("arg_1").asText()).isEqualTo(last);
            // resps [[[ll, is_greedy]]] (one request, one repeat), filtered_resps [[ll, is_greedy]].
            assertThat(line.path("resps").size()).isEqualTo(1);
            assertThat(line.path("resps").get(0).size()).isEqualTo(1);
            JsonNode pair = line.path("filtered_resps").get(0);
            assertThat(line.path("filtered_resps").size()).isEqualTo(1);
            assertThat(line.path("resps").get(0).get(0)).isEqualTo(pair);
            assertThat(pair.get(1).asText()).isIn("True", "False");
            // process_results: {"perplexity": ll, "acc": int(is_greedy)}.
            ll[d] = Double.parseDouble(pair.get(0).asText());
            assertThat(line.path("perplexity").isNumber()).isTrue();
            assertThat(line.path("perplexity").asDouble()).isEqualTo(ll[d]);
            assertThat(line.path("acc").isInt()).as("int(is_greedy)").isTrue();
            acc[d] = pair.get(1).asText().equals("True") ? 1 : 0;
            assertThat(line.path("acc").asInt()).isEqualTo((int) acc[d]);
        }

        String task = results.path("results").fieldNames().next();
        assertThat(task).isEqualTo("lambada_openai");
        JsonNode figures = results.path("results").path(task);
        assertThat(fieldNames(figures.fieldNames())).containsExactly("alias", "perplexity,none",
                "perplexity_stderr,none", "acc,none", "acc_stderr,none");
        // lm-eval's perplexity aggregation: exp(-mean(items)) over the lines' perplexity values.
        double ppl = Math.exp(-mean(ll));
        assertThat(figures.path("perplexity,none").asDouble()).isCloseTo(ppl, within(1e-9));
        assertThat(figures.path("perplexity_stderr,none").asDouble()).isCloseTo(ppl * stderr(ll), within(1e-9));
        assertThat(figures.path("acc,none").asDouble()).isCloseTo(mean(acc), within(1e-12));
        assertThat(figures.path("acc_stderr,none").asDouble()).isCloseTo(stderr(acc), within(1e-12));
        JsonNode interval = results.path("panoptes").path("perplexity_interval");
        double half = 2.7764451051977987 * stderr(ll); // t(0.975, 4)
        assertThat(interval.path("method").asText()).isEqualTo("t interval on the mean log-likelihood, clustered by"
                + " vignette, through exp(-x)");
        assertThat(interval.path("low").asDouble()).isCloseTo(Math.exp(-(mean(ll) + half)), within(1e-6));
        assertThat(interval.path("high").asDouble()).isCloseTo(Math.exp(-(mean(ll) - half)), within(1e-6));
        JsonNode config = results.path("configs").path(task);
        assertThat(config.path("output_type").asText()).isEqualTo("loglikelihood");
        assertThat(config.path("metric_list").findValuesAsText("metric")).containsExactly("perplexity", "acc");
        assertThat(config.path("metric_list").findValuesAsText("aggregation")).containsExactly("perplexity", "mean");
        assertThat(results.path("higher_is_better").path(task).path("perplexity").asBoolean()).isFalse();
        assertThat(results.path("higher_is_better").path(task).path("acc").asBoolean()).isTrue();
    }

    @Test
    void aLoglikelihoodRunsHtmlReportShowsPerplexityWithItsIntervalAndMethodInTableAndData() throws Exception {
        Path lambada = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai.yaml")
                .toAbsolutePath().normalize();
        Path db = dir.resolve("ll.db");
        assertThat(run("eval", "--task", lambada.toString(), "--dataset-file",
                lambada.resolveSibling("lambada_openai_test.jsonl").toString(), "--db", db.toString(),
                "--model", StubModelServer.MODEL, "--model-api=" + stub.baseUrl(), "--epochs", "2")).isZero();
        Path html = dir.resolve("report.html");
        assertThat(run("report", "--db", db.toString(), "--out", html.toString())).isZero();

        // Recomputed from the stored answers: two epochs of five documents, clustered by document.
        List<double[]> byDoc = new ArrayList<>();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db);
             java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT vignette_id, response FROM panoptes_records"
                     + " ORDER BY vignette_id")) {
            while (rs.next()) {
                byDoc.add(new double[]{Double.parseDouble(rs.getString(1)), dev.panoptes.control.score
                        .ChoiceLoglikelihoods.parse(rs.getString(2)).loglikelihoods().get(0)});
            }
        }
        assertThat(byDoc).hasSize(10);
        double m = byDoc.stream().mapToDouble(x -> x[1]).average().orElseThrow();
        double clusterSquares = 0;
        for (int doc = 0; doc < 5; doc++) {
            final int d = doc;
            double residuals = byDoc.stream().filter(x -> x[0] == d).mapToDouble(x -> x[1] - m).sum();
            clusterSquares += residuals * residuals;
        }
        double se = Math.sqrt(5.0 / 4 * clusterSquares) / 10;
        double half = 2.7764451051977987 * se; // t(0.975, G - 1 = 4)
        String page = Files.readString(html);
        assertThat(page).contains("<h3>Perplexity</h3>\n<p class=\"method\">95% CI: t interval on the mean"
                + " log-likelihood, clustered by vignette, through exp(-x)</p>");
        assertThat(page).containsPattern("data-metric=\"perplexity\">" + String.format(java.util.Locale.ROOT,
                "%.3f", Math.exp(-m)).replace(".", "\\.") + "<");
        assertThat(page).containsPattern("data-metric=\"perplexity-ci-low\">" + String.format(java.util.Locale.ROOT,
                "%.3f", Math.exp(-(m + half))).replace(".", "\\.") + "<");
        assertThat(page).containsPattern("data-metric=\"perplexity-ci-high\">" + String.format(java.util.Locale.ROOT,
                "%.3f", Math.exp(-(m - half))).replace(".", "\\.") + "<");
        assertThat(page).contains("\"perplexity\":{\"n\":10,\"clusters\":5,\"perplexity\":");

        // Inspect has no loglikelihood samples: the target is the continuation, the output what was measured.
        Path logs = dir.resolve("logs");
        assertThat(run("export", "--db", db.toString(), "--format", "inspect", "--out", logs.toString())).isZero();
        Path log;
        try (Stream<Path> files = Files.list(logs)) {
            log = files.filter(p -> p.toString().endsWith(".json") && !p.endsWith("listing.json")).findFirst()
                    .orElseThrow();
        }
        JsonNode samples = JSON.readTree(log.toFile()).path("samples");
        assertThat(samples.size()).isEqualTo(10);
        for (JsonNode sample : samples) {
            assertThat(sample.has("choices")).isFalse();
            assertThat(sample.path("target").asText()).matches(" [a-z]+");
            String completion = sample.path("output").path("completion").asText();
            assertThat(completion).matches("log-likelihood -\\d+\\.\\d+(e-?\\d+)?, is_greedy (True|False)");
            assertThat(sample.path("scores").path("acc").path("value").asDouble())
                    .isEqualTo(completion.endsWith("True") ? 1.0 : 0.0);
        }
    }

    private static List<String> fieldNames(java.util.Iterator<String> names) {
        List<String> list = new ArrayList<>();
        names.forEachRemaining(list::add);
        return list;
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }

    /** lm-eval's mean_stderr: the sample standard deviation (n - 1) over sqrt(n). */
    private static double stderr(double[] v) {
        double m = mean(v);
        double ss = 0;
        for (double x : v) {
            ss += (x - m) * (x - m);
        }
        return Math.sqrt(ss / (v.length - 1)) / Math.sqrt(v.length);
    }

    private static Path only(Path folder, String prefix) throws Exception {
        try (Stream<Path> files = Files.list(folder)) {
            List<Path> found = files.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
            assertThat(found).as("%s* in %s", prefix, folder).hasSize(1);
            return found.get(0);
        }
    }

    private int run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        assertThat(exit).as("%s%nconsole:%n%s%nout:%n%s", String.join(" ", args), err, out).isZero();
        return exit;
    }
}
