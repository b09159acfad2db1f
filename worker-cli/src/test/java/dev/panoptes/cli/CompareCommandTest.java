package dev.panoptes.cli;

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
import dev.panoptes.report.ReportPage;
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
                        + " (scoring 1, exact); paired t over vignettes (each vignette's mean over its epochs), 95% CI from Student's t:")
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
        assertThat(out.toString()).contains("Comparing run " + RUN + " of " + a + " (scoring 1, exact) with run " + RUN + " of " + b
                        + " (scoring 1, exact); ")
                .doesNotContain("scorers differ")
                .contains("m (run " + RUN + ", second) - m (run " + RUN + ", first): 0.000, 95% CI -1.000 to +1.000, SE 0.408, p=1.000, 4 vignettes")
                .contains("changed: 2 vignettes:\n      q0: 1.000 -> 0.000 (-1.000)\n      q3: 0.000 -> 1.000 (+1.000)");
        String withOptions = out.toString();
        out.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--db", b.toString(), "--run", RUN, "--run", RUN))
                .isZero();
        assertThat(out.toString()).isEqualTo(withOptions);
        out.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--db", b.toString(), RUN.substring(0, 8), RUN))
                .as("run ids as arguments, as a user first types them").isZero();
        assertThat(out.toString()).isEqualTo(withOptions);

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
        assertThat(err.toString()).contains(a + " holds no run 'cafe'; it holds " + RUN
                + " (a run id, or its first 8 or more characters)");
        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", a.toString(), "--db", b.toString(), "--run", RUN)).isEqualTo(2);
        assertThat(err.toString()).contains("give no --run, one per --db, or two with one --db");
    }

    @Test
    void eachSideShowsTheScoringAskedForAndAScorerMismatchIsSaidBeforeTheFigures() throws Exception {
        String a = "aaaaaaaa00000001";
        String b = "bbbbbbbb00000002";
        // big says "The answer is 2N" (numeric: right, exact: wrong); small says "2N", but nothing to q1.
        String[] wordy = new String[6];
        String[] plain = answers(6, "q1");
        for (int i = 0; i < 6; i++) {
            wordy[i] = "The answer is " + i * 2;
        }
        Path db = store("m.db", a, Map.of("big", new String[][] {wordy}), "What is q", "numeric");
        store("m.db", b, Map.of("small", new String[][] {plain}), "What is q", "exact");
        String both = " --db " + db + " --run " + a + " --run " + b;

        // The user's case: numeric against exact, which used to be compared silently.
        assertThat(execute(("compare" + both).split(" "))).isZero();
        String line = "scorers differ: run " + a + " (scoring 1) used numeric, run " + b + " (scoring 1) used"
                + " exact, so the difference mixes models and scorers; ";
        assertThat(out.toString()).startsWith("Comparing run " + a + " of " + db + " (scoring 1, numeric) with run "
                        + b + " of " + db + " (scoring 1, exact); paired t")
                .contains("\n" + line + "rescore one side with the other's scorer (rescore --db " + db + " --run " + b
                        + " --scorer numeric), then compare again\n  small (run " + b + ") - big (run " + a + "): ");

        out.getBuffer().setLength(0);
        assertThat(execute(("compare --json" + both).split(" "))).isZero();
        JsonNode json = JSON.readTree(out.toString());
        assertThat(json.get("scorersDiffer").asBoolean()).isTrue();
        assertThat(json.get("runs").get(1).get("database").asText()).isEqualTo(db.toString());
        assertThat(json.get("runs").get(1).get("scoring").asInt()).isEqualTo(1);
        assertThat(json.get("runs").get(1).get("scorer").asText()).isEqualTo("exact");
        JsonNode pair = json.get("comparisons").get(0);
        assertThat(pair.get("scorersDiffer").asBoolean()).isTrue();
        assertThat(pair.get("baseline").get("scorer").asText()).isEqualTo("numeric");
        assertThat(pair.get("other").get("scoring").asInt()).isEqualTo(1);
        assertThat(err.toString()).contains(line);

        // Rescoring big with exact (by a prefix of its id) makes the latest scorings agree.
        out.getBuffer().setLength(0);
        assertThat(execute("rescore", "--db", db.toString(), "--run", "aaaaaaaa", "--scorer", "exact")).isZero();
        assertThat(out.toString()).contains("run " + a + ": scoring 2 made with exact");
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        assertThat(execute(("compare --json" + both).split(" "))).isZero();
        assertThat(JSON.readTree(out.toString()).get("scorersDiffer").asBoolean()).isFalse();
        assertThat(err.toString()).isEmpty();
        out.getBuffer().setLength(0);
        assertThat(execute(("compare" + both).split(" "))).isZero();
        // Exact on both: big 0 everywhere, small 1 but on q1: +5/6.
        assertThat(out.toString()).contains("(scoring 2, exact) with run " + b + " of " + db + " (scoring 1, exact)")
                .doesNotContain("scorers differ").contains("small (run " + b + ") - big (run " + a + "): +0.833");

        // --scoring once is every side's; the way out is now the scoring that exists.
        out.getBuffer().setLength(0);
        assertThat(execute(("compare --scoring 1" + both).split(" "))).isZero();
        assertThat(out.toString()).contains("(scoring 1, numeric) with run " + b + " of " + db + " (scoring 1, exact)")
                .contains(line + "run " + a + "'s scoring 2 used exact: compare with --scoring 2 --scoring 1\n")
                .contains("small (run " + b + ") - big (run " + a + "): -0.167");

        // Twice: in the order of the runs; one run at two scorings names its sides by scoring.
        out.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", db.toString(), "--run", a, "--run", a, "--scoring", "1", "--scoring",
                "2")).isZero();
        assertThat(out.toString()).contains("on one run it is the scorers' difference\n")
                .contains("big (run " + a + ", scoring 2) - big (run " + a + ", scoring 1): -1.000");

        // A scoring the run does not have: the message results gives, word for word.
        err.getBuffer().setLength(0);
        assertThat(execute(("compare --scoring 0 --scoring 3" + both).split(" "))).isEqualTo(2);
        String compared = err.toString().lines().findFirst().orElseThrow();
        err.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--run", b, "--scoring", "3")).isEqualTo(2);
        assertThat(compared).isEqualTo(err.toString().lines().findFirst().orElseThrow())
                .startsWith("Invalid value for option '--scoring': run " + b + " has no scoring 3; it has scoring 1"
                        + " (exact, run, ");

        err.getBuffer().setLength(0);
        assertThat(execute(("compare --scoring 1 --scoring 1 --scoring 1" + both).split(" "))).isEqualTo(2);
        assertThat(err.toString()).contains("give it once (for every run compared) or once per run, in the order of"
                + " the runs; got 3 for 2 runs");
        err.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", db.toString(), "--scoring", "-1")).isEqualTo(2);
        assertThat(err.toString()).contains("-1 is not a scoring number; scorings are numbered from 1");
    }

    @Test
    void aRunIdPrefixNamesItsRunInEveryCommandAndAnAmbiguousOneIsRefusedNamingTheCandidates() throws Exception {
        String first = "d836ee8c00000001";
        String second = "d836ee8c11111111";
        Path db = store("p.db", RUN, Map.of("m", new String[][] {answers(3, "q0")}));
        store("p.db", first, Map.of("m", new String[][] {answers(3, "")}), "What is q", "exact");
        store("p.db", second, Map.of("m", new String[][] {answers(3, "q2")}), "What is q", "exact");

        assertThat(execute("results", "--db", db.toString(), "--run", "01234567")).isZero();
        assertThat(out.toString().lines()).hasSize(3).allMatch(l -> l.startsWith("{\"runId\":\"" + RUN + "\""));
        out.getBuffer().setLength(0);
        assertThat(execute("compare", "--db", db.toString(), "--run", "01234567", "--run", "D836EE8C0")).isZero();
        assertThat(out.toString()).contains("Comparing run " + RUN + " of " + db + " (scoring 1, exact) with run "
                + first + " of ").contains("m (run " + first + ") - m (run " + RUN + "): +0.333");
        out.getBuffer().setLength(0);
        Path html = dir.resolve("p.html");
        assertThat(execute("report", "--db", db.toString(), "--run", "d836ee8c1", "--out", html.toString())).isZero();
        assertThat(out.toString()).contains(": 1 run, 3 answers");
        assertThat(Files.readString(html)).contains("data-run=\"" + second + "\"")
                .doesNotContain("data-run=\"" + first + "\"").doesNotContain("data-run=\"" + RUN + "\"");
        out.getBuffer().setLength(0);
        assertThat(execute("rescore", "--db", db.toString(), "--run", "d836ee8c1", "--scorer", "includes")).isZero();
        assertThat(out.toString()).startsWith("run " + second + ": scoring 2 made with includes");

        assertThat(execute("compare", "--db", db.toString(), "--run", "d836ee8c", "--run", RUN)).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--run': 'd836ee8c' starts 2 runs of " + db
                + ": " + first + ", " + second + "; give more of the id");
        err.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--run", "d836")).isEqualTo(2);
        assertThat(err.toString()).contains("'d836' is too short to name a run: give the whole id or its first 8 or"
                + " more characters (runs it starts: " + first + ", " + second + ")");
        err.getBuffer().setLength(0);
        assertThat(execute("report", "--db", db.toString(), "--run", "feedface")).isEqualTo(2);
        assertThat(err.toString()).contains("the database holds no run 'feedface'; it holds ");
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
        return store(name, run, epochsByModel, prompt, "exact");
    }

    /**
     * A run in a SQLite database (new, or one holding other runs), scored by {@code scorer}: per
     * model, per epoch, the answers to q0.. ("What is qN?", expected 2N).
     */
    private Path store(String name, String run, Map<String, String[][]> epochsByModel, String prompt,
                       String scorer) {
        Path db = dir.resolve(name);
        List<String> models = new ArrayList<>(new java.util.TreeMap<>(epochsByModel).keySet());
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring(scorer))) {
            int vignettes = epochsByModel.values().iterator().next()[0].length;
            store.recordRun(new RunEntry(run, "s.jsonl", models, scorer, 2, vignettes, Instant.EPOCH));
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
