package dev.panoptes.worker;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.store.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
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
 * same command resumes its run, and another scorer adds a scoring; and two coordinators evaluating
 * two models of one suite on one PostgreSQL database run side by side. Runs in Maven's
 * integration-test phase, after {@code package}.
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
        checkSideBySide(pg, runId(pgBig), runId(pgSmall), pgBig, pgSmall);

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
    }

    private void checkSideBySide(TestPostgres.Database pg, String runBig, String runSmall, Process... coordinators)
            throws IOException {
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
