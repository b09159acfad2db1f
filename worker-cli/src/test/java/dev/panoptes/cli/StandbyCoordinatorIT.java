package dev.panoptes.cli;

import dev.panoptes.control.store.TestPostgres;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.testing.JarProcesses;
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
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A standby coordinator ({@code coordinator --standby}) takes a run over from its primary, with
 * the built {@code worker.jar} as real processes on one real PostgreSQL database
 * ({@link TestPostgres}): a primary, a standby and two workers given both addresses, against the
 * stub model API. The primary is killed ({@code kill -9}), or frozen ({@code SIGSTOP}) and woken
 * after the standby finished the run: either way the run completes with every answer stored
 * once, and a woken primary stores nothing and exits fenced. Runs in surefire's
 * test JVMs, worker.jar being built before the test phase.
 */
@Timeout(150)
class StandbyCoordinatorIT {
    private static final String MODEL = DemoCommand.MODEL;
    private static final int VIGNETTES = 120;
    /** Heartbeats of the killed-primary case: its workers see the primary's socket close at once. */
    private static final String HEARTBEAT = "1s";
    /**
     * Heartbeats of the frozen-primary case: a frozen primary's kernel keeps its connections open,
     * so its workers notice only by their heartbeat timeout (three heartbeats), and may wait it out
     * twice (the second time on a reconnect to the frozen one) before they move to the standby.
     * What is checked (the takeover, the fencing) does not depend on how long that takes; at 1 s it
     * was 6 s of the test's time.
     */
    private static final String FAST_HEARTBEAT = "300ms";
    private static final Pattern STANDBY_ADDRESS = Pattern.compile("telling workers on (127\\.0\\.0\\.1:\\d+) ");

    @TempDir
    Path dir;

    private final JarProcesses jars;
    private final TestPostgres.Database db = TestPostgres.freshDatabase();

    StandbyCoordinatorIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void aStandbyTakesTheRunOverWhenItsPrimaryIsKilledAndTheRunCompletesWithEveryAnswerStoredOnce()
            throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(60), 16));
        Process primary = coordinator(HEARTBEAT);
        String primaryAddress = jars.awaitListening(primary);
        Process standby = coordinator(HEARTBEAT, "--standby");
        String standbyAddress = standbyAddress(standby);
        worker("w1", primaryAddress + "," + standbyAddress, model, HEARTBEAT);
        // The standby's address first: it tells the worker it does not hold the run, and the worker moves on.
        Process w2 = worker("w2", standbyAddress + "," + primaryAddress, model, HEARTBEAT);
        jars.awaitOutput(w2, "registered with coordinator " + primaryAddress);
        assertThat(jars.log(w2)).contains("coordinator " + standbyAddress + " rejected the registration for now:"
                + " this is a standby coordinator: it does not hold run ");

        await().atMost(Duration.ofSeconds(60)).until(() -> stored() >= 10 || !primary.isAlive());
        assertThat(primary.isAlive()).as("the primary is still running; its output:%n%s", jars.log(primary)).isTrue();
        primary.destroyForcibly();

        jars.assertExitCode(standby, 0);
        String printed = jars.log(standby);
        assertThat(printed).contains("standby: took over run", "(takeover epoch 2)")
                .contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing");
        assertStoredOnce();
        assertThat(query("SELECT number FROM panoptes_sittings ORDER BY number")).containsExactly("1", "2");
    }

    @Test
    void aFrozenPrimaryLosesTheRunToTheStandbyAndOnWakingStoresNothingAndExitsFenced() throws Exception {
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(60), 16));
        Process primary = coordinator(FAST_HEARTBEAT, "--lock-lease", "2s");
        String primaryAddress = jars.awaitListening(primary);
        Process standby = coordinator(FAST_HEARTBEAT, "--standby", "--lock-lease", "2s");
        String standbyAddress = standbyAddress(standby);
        // One worker: it follows the run from the frozen primary to the standby as a second would,
        // and the suite starts one JVM less.
        worker("w1", primaryAddress + "," + standbyAddress, model, FAST_HEARTBEAT);

        await().atMost(Duration.ofSeconds(60)).until(() -> stored() >= 10 || !primary.isAlive());
        assertThat(primary.isAlive()).as("the primary is still running; its output:%n%s", jars.log(primary)).isTrue();
        signal("STOP", primary);
        try {
            // Its lock's session, idle for the lease, is ended by the server: the standby takes over.
            jars.assertExitCode(standby, 0);
            assertThat(jars.log(standby)).contains("standby: took over run", "(takeover epoch 2)")
                    .contains("answers:     " + VIGNETTES + " of " + VIGNETTES + " stored, 0 missing");
            assertStoredOnce();
            List<String> before = everything();

            signal("CONT", primary);
            jars.assertExitCode(primary, 9);
            assertThat(jars.log(primary)).contains("fenced: run ").contains("was taken over by another coordinator")
                    .contains("takeover epoch 2").contains("this coordinator held epoch 1 and stores nothing more");
            assertThat(everything()).as("what the store holds after the woken primary exited")
                    .isEqualTo(before);
        } finally {
            if (primary.isAlive()) {
                // So that tearDown's kill reaches a process that can die.
                signal("CONT", primary);
            }
        }
    }

    /** A coordinator sending heartbeats every {@code heartbeat} (and dropping workers silent for three). */
    private Process coordinator(String heartbeat, String... extra) throws IOException, SQLException {
        Path suite = dir.resolve("math.jsonl");
        if (!Files.exists(suite)) {
            StringBuilder lines = new StringBuilder();
            for (int i = 0; i < VIGNETTES; i++) {
                lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\"}\n");
            }
            Files.writeString(suite, lines);
            Files.writeString(dir.resolve("password"), db.password() + "\n");
        }
        List<String> args = new ArrayList<>(List.of("coordinator", "--suite", suite.toString(), "--model", MODEL,
                "--db", "postgresql://" + db.user() + "@" + db.url().substring("jdbc:postgresql://".length()),
                "--db-password-file", dir.resolve("password").toString(), "--listen", "127.0.0.1:0",
                "--job-size", "2", "--heartbeat-interval", heartbeat, "--wait-for-workers", "2m"));
        args.addAll(List.of(extra));
        return jars.start(args.toArray(String[]::new));
    }

    /** A worker sending heartbeats every {@code heartbeat}, as its coordinators do (they must agree). */
    private Process worker(String id, String coordinators, StubModelServer model, String heartbeat)
            throws IOException {
        return jars.start("--coordinator", coordinators, "--model-api", model.baseUrl().toString(), "--model", MODEL,
                "--id", id, "--capacity", "2", "--heartbeat", heartbeat);
    }

    private String standbyAddress(Process standby) throws IOException {
        await().atMost(Duration.ofSeconds(60)).until(() -> STANDBY_ADDRESS.matcher(jars.log(standby)).find()
                || !standby.isAlive());
        Matcher m = STANDBY_ADDRESS.matcher(jars.log(standby));
        assertThat(m.find()).as("the standby answers workers; its output:%n%s", jars.log(standby)).isTrue();
        return m.group(1);
    }

    private long stored() throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM panoptes_records")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return 0;
            }
            throw e;
        }
    }

    private void assertStoredOnce() throws SQLException {
        assertThat(query("SELECT count(*), count(DISTINCT vignette_id), count(DISTINCT job_id || '/' || vignette_id)"
                + " FROM panoptes_records")).containsExactly(VIGNETTES + "\t" + VIGNETTES + "\t" + VIGNETTES);
        assertThat(query("SELECT count(*) FROM panoptes_failures")).containsExactly("0");
    }

    /** Every row of every table the run writes, in a fixed order, one string per row. */
    private List<String> everything() throws SQLException {
        List<String> rows = new ArrayList<>();
        for (String table : List.of("panoptes_records", "panoptes_failures", "panoptes_runs", "panoptes_sittings",
                "panoptes_worker_events", "panoptes_scorings", "panoptes_scores", "panoptes_run_leases")) {
            for (String row : query("SELECT * FROM " + table + " ORDER BY 1, 2")) {
                rows.add(table + ": " + row);
            }
        }
        return rows;
    }

    private List<String> query(String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            ResultSetMetaData meta = rs.getMetaData();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    row.append(i > 1 ? "\t" : "").append(rs.getString(i));
                }
                rows.add(row.toString());
            }
        }
        return rows;
    }

    private static void signal(String signal, Process p) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", signal, p.pid()).isZero();
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }
}
