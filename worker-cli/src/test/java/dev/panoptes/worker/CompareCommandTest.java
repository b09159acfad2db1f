package dev.panoptes.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.worker.report.ReportPage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@code compare} on SQLite databases a run wrote: one run's models, two databases, and refusals. */
class CompareCommandTest {
    private static final String RUN = "0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @Test
    void pairsTheModelsOfOneRunAndEveryNumberIsRecomputableFromTheExport() throws Exception {
        // big right on all 6; small wrong on q1 and q4 (in both epochs) and on q2 in epoch 1 only.
        Path db = store("one.db", RUN, Map.of("big", new String[][] {answers(6, ""), answers(6, "")},
                "small", new String[][] {answers(6, "q1", "q2", "q4"), answers(6, "q1", "q4")}));

        assertThat(execute("compare", "--db", db.toString(), "--show", "2")).isZero();
        // d = (-1, -0.5, 0, -1, 0, 0): mean -5/12 = -0.417, sd 0.4916, SE 0.2007, t = -2.076 with 5 df.
        assertThat(out.toString()).contains("Comparing the models of run " + RUN + " of " + db
                        + "; paired t over vignettes (each vignette's mean over its epochs), 95% CI from Student's t:")
                .contains("  small - big: -0.417, 95% CI -0.933 to +0.099, SE 0.201, p=0.093, 6 vignettes")
                .contains("    shared: 6 vignettes; left out: 0\n")
                .contains("    changed: 3 vignettes; the first 2:\n      q1: 1.000 -> 0.000 (-1.000)\n"
                        + "      q2: 1.000 -> 0.500 (-0.500)\n");

        out.getBuffer().setLength(0);
        Path html = dir.resolve("compare.html");
        assertThat(execute("compare", "--db", db.toString(), "--json", "--out", html.toString())).isZero();
        JsonNode json = JSON.readTree(out.toString());
        JsonNode pair = json.get("comparisons").get(0);
        assertThat(json.get("runs").get(0).get("manifest").get("runId").asText()).isEqualTo(RUN);
        assertThat(pair.get("sharedVignettes").asInt()).isEqualTo(6);
        assertThat(pair.get("changed")).hasSize(3);

        // The export: average each model's scores per vignette and pair them, by hand.
        out.getBuffer().setLength(0);
        Path manifest = dir.resolve("manifest.json");
        assertThat(execute("results", "--db", db.toString(), "--manifest", manifest.toString())).isZero();
        JsonNode card = JSON.readTree(Files.readString(manifest)).get("runs").get(0).get("manifest");
        assertThat(card.get("runId").asText()).isEqualTo(RUN);
        assertThat(card.get("models").asText()).isEqualTo("big, small");
        assertThat(card.get("scoring").asText()).startsWith("scoring 1 of 1 (exact, made by run at ");
        assertThat(card.get("temperature").isNull()).as("not recorded before run manifests").isTrue();
        Map<String, double[]> sums = new HashMap<>();
        for (String line : out.toString().split("\n")) {
            JsonNode r = JSON.readTree(line);
            double[] s = sums.computeIfAbsent(r.get("model").asText() + "/" + r.get("vignetteId").asText(),
                    k -> new double[2]);
            s[0] += r.get("score").asDouble();
            s[1]++;
        }
        List<Double> d = new ArrayList<>();
        for (int v = 0; v < 6; v++) {
            double[] b = sums.get("big/q" + v);
            double[] s = sums.get("small/q" + v);
            d.add(s[0] / s[1] - b[0] / b[1]);
        }
        double mean = d.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        double squares = d.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum();
        assertThat(pair.get("difference").asDouble()).isCloseTo(mean, within(1e-12));
        assertThat(pair.get("standardError").asDouble()).isCloseTo(Math.sqrt(squares / 5) / Math.sqrt(6), within(1e-12));
        assertThat(pair.get("pValue").asDouble()).isCloseTo(0.0926, within(0.0005));

        ReportPage page = new ReportPage(Files.readString(html));
        assertThat(page.table("compare")).contains("data-metric=\"difference\">-0.417<")
                .contains("data-metric=\"p-value\">0.093<");
    }

    @Test
    void comparesRunsOfTwoDatabasesAndRefusesWhenNothingIsShared() throws Exception {
        Path a = store("a.db", RUN, Map.of("m", new String[][] {answers(4, "q3")}));
        Path b = store("b.db", RUN, Map.of("m", new String[][] {answers(4, "q0")}));

        assertThat(execute("compare", "--db", a.toString(), "--db", b.toString())).isZero();
        assertThat(out.toString()).contains("Comparing run " + RUN + " of " + a + " with run " + RUN + " of " + b)
                .contains("m (run " + RUN + ", second) - m (run " + RUN + ", first): 0.000, 95% CI -1.000 to +1.000, SE 0.408, p=1.000, 4 vignettes")
                .contains("changed: 2 vignettes:\n      q0: 1.000 -> 0.000 (-1.000)\n      q3: 0.000 -> 1.000 (+1.000)");

        Path other = store("other.db", "feedfacefeedface", Map.of("m", new String[][] {answers(2, "")}),
                "another question ");
        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--db", other.toString())).isEqualTo(3);
        assertThat(err.toString()).contains("no vignette is shared")
                .contains("4 and 2 scored vignettes, 2 with the same id but another prompt or expected answer");

        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString())).isEqualTo(3);
        assertThat(err.toString()).contains("has 1 model: nothing to compare it with; name a second run");

        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--run", "cafe")).isEqualTo(2);
        assertThat(err.toString()).contains("holds no run 'cafe'; it holds " + RUN);
        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--db", b.toString(), "--run", RUN)).isEqualTo(2);
        assertThat(err.toString()).contains("give no --run, one per --db, or two with one --db");
    }

    @Test
    void theHelpNamesTheMethodAndTheExitCodes() {
        assertThat(execute("compare", "--help")).isZero();
        assertThat(err.toString()).as("picocli formats descriptions: a lone %% would be a warning").isEmpty();
        assertThat(out.toString().replaceAll("\\s+", " ")).contains("with its 95% interval")
                .contains("paired t over vignettes").contains("3 nothing to compare");
    }

    /** The answers to q0..q(n-1), the given vignettes answered wrong. */
    private static String[] answers(int n, String... wrong) {
        String[] answers = new String[n];
        for (int i = 0; i < n; i++) {
            answers[i] = List.of(wrong).contains("q" + i) ? "no idea" : Integer.toString(i * 2);
        }
        return answers;
    }

    private Path store(String name, String run, Map<String, String[][]> epochsByModel) {
        return store(name, run, epochsByModel, "What is q");
    }

    /** A run in a new SQLite database: per model, per epoch, the answers to q0.. ("What is qN?", expected 2N). */
    private Path store(String name, String run, Map<String, String[][]> epochsByModel, String prompt) {
        Path db = dir.resolve(name);
        List<String> models = new ArrayList<>(new java.util.TreeMap<>(epochsByModel).keySet());
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            int vignettes = epochsByModel.values().iterator().next()[0].length;
            store.recordRun(new RunEntry(run, "s.jsonl", models, "exact", 2, vignettes, Instant.EPOCH));
            for (String model : models) {
                String[][] epochs = epochsByModel.get(model);
                for (int e = 0; e < epochs.length; e++) {
                    List<Vignette> suite = new ArrayList<>();
                    List<ResponseRecord> records = new ArrayList<>();
                    for (int i = 0; i < epochs[e].length; i++) {
                        suite.add(new Vignette("q" + i, prompt + i + "?", Integer.toString(i * 2), Map.of()));
                        records.add(new ResponseRecord("q" + i, epochs[e][i]));
                    }
                    Job job = new Job(JobId.of(run + "-" + model + "-e" + e + "-0000"),
                            new EvalSpec("s", suite, SpecParams.NONE.withModel(model)), run, e);
                    store.record(job, new JobOutcome(job.id(), records), "w1");
                }
            }
        }
        return db;
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}
