package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.store.TestPostgres;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.report.Figures;
import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run is what its command says, with the built {@code worker.jar} as real coordinator and
 * worker processes against a stub model API on loopback: a command that asks another model of
 * the same suite is another run (naming the one it did not join) rather than merging into it; the
 * same command resumes its run, and another scorer adds a scoring (and {@code compare} says when
 * the scorings it pairs used different scorers); and two coordinators evaluating two models of
 * one suite on one PostgreSQL database run side by side, and {@code compare} pairs them. Runs in
 * surefire's test JVMs, worker.jar being built before the test phase.
 */
@Timeout(120)
class RunIdentityIT {
    private static final String BIG = DemoCommand.MODEL;
    private static final String SMALL = DemoCommand.SMALL_MODEL;
    private static final int VIGNETTES = 12;
    private static final Pattern RUN_ID = Pattern.compile("\\(run ([0-9a-f]{16})\\)");

    @TempDir
    Path dir;

    private final JarProcesses jars;
    private final StubModelServer model;

    RunIdentityIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
        model = jars.closeLater(StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(1), 8));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    /**
     * Both scenarios in one method, side by side, so that their process starts overlap: on SQLite,
     * a first run, another model's run, then the first command again with another scorer; on
     * PostgreSQL, two coordinators of two models of the suite at once.
     */
    @Test
    void anotherModelIsANewRunTheSameCommandResumesAndTwoModelsRunSideBySideOnOnePostgresDatabase()
            throws Exception {
        Path suite = suite();
        String db = dir.resolve("runs.db").toString();
        TestPostgres.Database pg = TestPostgres.freshDatabase();
        String url = pg.url().replace("jdbc:postgresql://", "postgresql://" + pg.user() + "@");
        Map<String, String> env = Map.of("PANOPTES_DB_PASSWORD", pg.password());

        Process big = coordinator(Map.of(), suite, db, BIG, "numeric");
        // Both PostgreSQL coordinators hold their runs before either has a worker: one run would be refused.
        Process pgBig = coordinator(env, suite, url, BIG, "numeric");
        Process pgSmall = coordinator(env, suite, url, SMALL, "numeric");
        worker(jars.awaitListening(big), "w-big");
        worker(jars.awaitListening(pgBig), "w-pg-big");
        worker(jars.awaitListening(pgSmall), "w-pg-small");

        jars.assertExitCode(big, 0);
        String runBig = runId(big);
        assertThat(jars.log(big)).contains("new run " + runBig + "\n")
                .contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing");

        Process small = coordinator(Map.of(), suite, db, SMALL, "exact");
        worker(jars.awaitListening(small), "w-small");

        jars.assertExitCode(pgBig, 0);
        jars.assertExitCode(pgSmall, 0);
        List<StoredRecord> pgRecords = checkSideBySide(pg, runId(pgBig), runId(pgSmall), pgBig, pgSmall);
        comparePairsThem(url, env, runId(pgBig), runId(pgSmall), pgRecords);

        jars.assertExitCode(small, 0);
        String runSmall = runId(small);
        assertThat(runSmall).isNotEqualTo(runBig);
        assertThat(jars.log(small)).contains("new run " + runSmall + ": run " + runBig + " of this suite differs in"
                        + " models [" + BIG + "] -> [" + SMALL + "]\n")
                .contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing")
                .contains("    " + SMALL + ": ").doesNotContain("    " + BIG + ": ");

        // The first command again, with another scorer: it resumes (nothing to ask) and scores again.
        Process again = coordinator(Map.of(), suite, db, BIG, "exact");
        jars.assertExitCode(again, 0);
        assertThat(runId(again)).isEqualTo(runBig);
        assertThat(jars.log(again)).contains("resuming run " + runBig + ": " + VIGNETTES + " of " + VIGNETTES
                        + " answers stored\n")
                .contains("run " + runBig + ": scoring 2 with exact (scoring 1 used numeric, and is kept: report"
                        + " --scoring 1); " + VIGNETTES + " stored answers scored again")
                .contains("accuracy (exact, scoring 2)");

        try (JdbcResultStore store = JdbcResultStore.openSqlite(Path.of(db))) {
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactlyInAnyOrder(runBig, runSmall);
            assertThat(store.scorings(runBig)).extracting(Scoring::scorer).containsExactly("numeric", "exact");
            assertThat(store.scorings(runSmall)).extracting(Scoring::scorer).containsExactly("exact");
            assertThat(store.recordCount()).isEqualTo(2 * VIGNETTES);
        }

        // compare shows the latest scorings (both exact); asked for scoring 1 of each, it says numeric is not exact.
        StringWriter out = new StringWriter();
        assertThat(compare(Map.of(), out, "--db", db, "--run", runBig, "--run", runSmall)).isZero();
        assertThat(out.toString()).contains("run " + runBig + " of " + db + " (scoring 2, exact) with run " + runSmall)
                .doesNotContain("scorers differ");
        out.getBuffer().setLength(0);
        assertThat(compare(Map.of(), out, "--db", db, "--run", runBig, "--run", runSmall, "--scoring", "1")).isZero();
        assertThat(out.toString()).contains("\nscorers differ: run " + runBig + " (scoring 1) used numeric, run "
                + runSmall + " (scoring 1) used exact, so the difference mixes models and scorers; run " + runBig
                + "'s scoring 2 used exact: compare with --scoring 2 --scoring 1\n");
    }

    /**
     * The done-when of issue 18: {@code compare} on the PostgreSQL database the two coordinators
     * shared pairs their runs (the first named by the first 8 characters of its id, as a user
     * copies it) on all the suite's vignettes, with the difference the stored scores give.
     */
    private void comparePairsThem(String url, Map<String, String> env, String runBig, String runSmall,
                                  List<StoredRecord> records) {
        double[] big = new double[VIGNETTES];
        double[] small = new double[VIGNETTES];
        for (StoredRecord r : records) {
            int vignette = Integer.parseInt(r.record().vignetteId().substring(1));
            (r.context().runId().equals(runBig) ? big : small)[vignette] = r.score().score();
        }
        double sum = 0;
        for (int v = 0; v < VIGNETTES; v++) {
            sum += small[v] - big[v];
        }
        StringWriter out = new StringWriter();
        assertThat(compare(env, out, "--db", url, "--run", runBig.substring(0, 8), "--run", runSmall)).isZero();
        assertThat(out.toString()).startsWith("Comparing run " + runBig + " of " + url + " (scoring 1, numeric) with"
                        + " run " + runSmall + " of " + url + " (scoring 1, numeric); ")
                .doesNotContain("scorers differ").doesNotContain(env.get("PANOPTES_DB_PASSWORD"))
                .contains("\n  " + SMALL + " (run " + runSmall + ") - " + BIG + " (run " + runBig + "): "
                        + Figures.difference(sum / VIGNETTES) + ", 95% CI ")
                .contains(", " + VIGNETTES + " vignettes\n    shared: " + VIGNETTES + " vignettes; left out: 0\n");
    }

    /** {@code compare}, in this JVM (cheap; the runs it reads are what the processes wrote), its exit code. */
    private static int compare(Map<String, String> env, StringWriter out, String... args) {
        String[] command = new String[args.length + 1];
        command[0] = "compare";
        System.arraycopy(args, 0, command, 1, args.length);
        StringWriter err = new StringWriter();
        int code = WorkerMain.run(command, new PrintWriter(out, true), new PrintWriter(err, true), env);
        assertThat(err.toString()).as("compare's errors").isEmpty();
        return code;
    }

    private List<StoredRecord> checkSideBySide(TestPostgres.Database pg, String runBig, String runSmall,
                                               Process... coordinators) throws IOException {
        assertThat(runBig).isNotEqualTo(runSmall);
        for (Process p : coordinators) {
            assertThat(jars.log(p)).contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing")
                    .doesNotContain("in use by another coordinator").doesNotContain(pg.password());
        }
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = pg.open()) {
            store.forEachRecord(records::add);
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactlyInAnyOrder(runBig, runSmall);
        }
        assertThat(records).filteredOn(r -> r.context().runId().equals(runBig)).hasSize(VIGNETTES)
                .extracting(r -> r.context().model()).containsOnly(BIG);
        assertThat(records).filteredOn(r -> r.context().runId().equals(runSmall)).hasSize(VIGNETTES)
                .extracting(r -> r.context().model()).containsOnly(SMALL);
        return records;
    }

    private Path suite() throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < VIGNETTES; i++) {
            lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\",")
                    .append("\"expected\":\"").append(i + 1).append("\"}\n");
        }
        return Files.writeString(dir.resolve("math.jsonl"), lines);
    }

    private Process coordinator(Map<String, String> env, Path suite, String db, String modelName, String scorer)
            throws IOException {
        return jars.start(env, "coordinator", "--suite", suite.toString(), "--model", modelName, "--scorer", scorer,
                "--db", db, "--listen", "127.0.0.1:0", "--job-size", "4", "--heartbeat-interval", "1s",
                "--wait-for-workers", "1m");
    }

    private void worker(String coordinator, String id) throws IOException {
        jars.start("--coordinator", coordinator, "--model-api", model.baseUrl().toString(), "--model", BIG,
                "--model", SMALL, "--id", id, "--capacity", "2", "--heartbeat", "1s");
    }

    private String runId(Process coordinator) throws IOException {
        Matcher m = RUN_ID.matcher(jars.log(coordinator));
        assertThat(m.find()).as(jars.log(coordinator)).isTrue();
        return m.group(1);
    }
}
