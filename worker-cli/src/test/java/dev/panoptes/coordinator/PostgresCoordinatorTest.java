package dev.panoptes.coordinator;

import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.store.TestPostgres;
import dev.panoptes.testing.LogCapture;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coordinators sharing one real PostgreSQL database ({@link TestPostgres}): different runs at once
 * with real workers over loopback, one coordinator per run, the read commands, and a password
 * that never shows.
 */
class PostgresCoordinatorTest {
    @TempDir
    Path dir;

    private final TestPostgres.Database db = TestPostgres.freshDatabase();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    /** Lets go of the jobs a stuck worker holds. */
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void stop() {
        release.countDown();
        synchronized (workers) {
            workers.forEach(WorkerLoop::close);
        }
        threads.shutdownNow();
    }

    @Test
    void twoCoordinatorsOfDifferentRunsWriteOneDatabaseAtOnceWithRealWorkers() throws Exception {
        Path suite = suite(12);
        StringWriter errA = new StringWriter();
        StringWriter errB = new StringWriter();
        CoordinatorRun a = run(settings(suite, "a", Duration.ofSeconds(30)), errA)
                .onListening(address -> startWorker(address, "w-a"));
        CoordinatorRun b = run(settings(suite, "b", Duration.ofSeconds(30)), errB)
                .onListening(address -> startWorker(address, "w-b"));

        try (LogCapture storeLog = LogCapture.of(JdbcResultStore.class);
             LogCapture lockLog = LogCapture.of(PostgresRunLock.class)) {
            Future<Integer> first = threads.submit(a::run);
            Future<Integer> second = threads.submit(b::run);

            assertThat(first.get(45, TimeUnit.SECONDS)).as(errA.toString()).isZero();
            assertThat(second.get(45, TimeUnit.SECONDS)).as(errB.toString()).isZero();
            assertThat(storeLog.messagesContaining(db.password())).isEmpty();
            assertThat(lockLog.messagesContaining(db.password())).isEmpty();
        }

        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = db.open()) {
            store.forEachRecord(records::add);
            assertThat(store.runs()).hasSize(2);
        }
        assertThat(records).hasSize(24);
        assertThat(records).filteredOn(r -> r.workerId().equals("w-a")).hasSize(12)
                .extracting(r -> r.context().runId()).containsOnly(a.summary().stats().info().runId());
        assertThat(records).filteredOn(r -> r.workerId().equals("w-b")).hasSize(12)
                .extracting(r -> r.context().runId()).containsOnly(b.summary().stats().info().runId());
        assertThat(a.summary().stats().info().runId()).isNotEqualTo(b.summary().stats().info().runId());
        assertThat(errA.toString() + errB.toString()).contains("results go to " + db.url().substring(5))
                .doesNotContain(db.password());
    }

    @Test
    void aSecondCoordinatorOnTheSameRunIsRefusedInOneLineWhileOtherRunsProceed() throws Exception {
        Path suite = suite(4);
        StringWriter holderErr = new StringWriter();
        CompletableFuture<InetSocketAddress> listening = new CompletableFuture<>();
        // No worker ever comes: the first coordinator holds its run until interrupted.
        CoordinatorRun holder = run(settings(suite, "", Duration.ofSeconds(50)), holderErr)
                .onListening(listening::complete);
        Future<Integer> held = threads.submit(holder::run);
        InetSocketAddress address = listening.get(20, TimeUnit.SECONDS);

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int refused = WorkerMain.run(new String[] {"coordinator", "--suite", suite.toString(), "--model", "m",
            "--job-size", "4", "--listen", "127.0.0.1:0", "--db", cliUrl()},
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of("PANOPTES_DB_PASSWORD", db.password()));

        assertThat(refused).as(err.toString()).isEqualTo(1);
        String message = err.toString().strip();
        assertThat(message).doesNotContain("\n").doesNotContain(db.password())
                .startsWith("worker.jar coordinator: run ").contains(" in " + db.url().substring(5) + " (user " + db.user() + ")")
                .contains("is in use by another coordinator (panoptes coordinator pid="
                        + ProcessHandle.current().pid())
                .contains("listen=" + CoordinatorRun.hostPort(address))
                .endsWith("; stop it, or give this run another --run-label");
        assertThat(out.toString()).isEmpty();

        DatabaseTarget.Postgres target = (DatabaseTarget.Postgres) holder.database();
        try (StoreLock other = target.lockRun("another-run", address)) {
            assertThat(other).isInstanceOf(PostgresRunLock.class);
        }

        held.cancel(true);
        assertThat(holder.summary()).isNull();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            try (StoreLock again = target.lockRun(runIdOf(holderErr), address)) {
                assertThat(again).isNotNull();
            }
        });
    }

    @Test
    void aCoordinatorWhoseLockSessionIsKilledStopsInOneLineKeepingWhatItStoredAndTheSameRunResumes()
            throws Exception {
        Path suite = suite(8);
        CoordinatorSettings settings = settings(suite, "", Duration.ofSeconds(50), 2);
        StringWriter err = new StringWriter();
        // One worker, one slot: the first job is answered, the second never is, so the run is
        // mid-way, with something stored, when its lock goes.
        AtomicInteger calls = new AtomicInteger();
        JobRunner firstThenStuck = job -> {
            if (calls.incrementAndGet() > 1 && !release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return answers().run(job);
        };
        CoordinatorRun run = run(settings, err).withLockCheck(Duration.ofMillis(200), Duration.ofSeconds(5))
                .onListening(address -> startWorker(address, "w-stuck", 1, firstThenStuck));
        Future<Integer> exit = threads.submit(run::run);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> storedRecords() == 2 && calls.get() == 2);

        terminateLockSession();

        // It stops, a check interval after the kill (plus the slack of a busy machine), instead of
        // going on unprotected: from now on a second coordinator could take the same run.
        assertThat(exit.get(10, TimeUnit.SECONDS)).as(err.toString()).isEqualTo(CoordinatorRun.EXIT_LOCK_LOST);
        String runId = runIdOf(err);
        List<String> stopped = err.toString().lines().filter(l -> l.contains("the run stopped")).toList();
        assertThat(stopped).hasSize(1);
        assertThat(stopped.get(0)).doesNotContain(db.password())
                .startsWith("the run stopped: lost the lock on run " + runId + " in " + run.database()
                        + ": the session holding it ended (")
                .endsWith("); another coordinator may take the run now, so this one stopped writing: 1 of 4 jobs is"
                        + " complete and kept there; run the same command again to resume (it is refused, naming the"
                        + " holder, while another coordinator has the run)");
        assertThat(run.summary()).isNull();
        assertThat(storedRecords()).isEqualTo(2);

        // The same run, again, with a worker that answers: the stored job is not sent again.
        StringWriter again = new StringWriter();
        CoordinatorRun resumed = run(settings, again).onListening(address -> startWorker(address, "w", 2, answers()));
        assertThat(resumed.run()).as(again.toString()).isZero();
        assertThat(runIdOf(again)).isEqualTo(runId);
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = db.open()) {
            store.forEachRecord(records::add);
            assertThat(store.duplicateCount()).isZero();
        }
        assertThat(records).hasSize(8);
        assertThat(records).filteredOn(r -> r.workerId().equals("w-stuck")).hasSize(2);
    }

    @Test
    void resultsReportAndRescoreReadAPostgresDatabaseWithThePasswordFromAFile() throws Exception {
        Path suite = suite(4);
        CoordinatorRun run = run(settings(suite, "", Duration.ofSeconds(30)), new StringWriter())
                .onListening(address -> startWorker(address, "w"));
        assertThat(run.run()).isZero();
        Path passwordFile = Files.writeString(dir.resolve("pw"), db.password() + "\n");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        PrintWriter o = new PrintWriter(out, true);
        PrintWriter e = new PrintWriter(err, true);

        assertThat(WorkerMain.run(new String[] {"results", "--db", cliUrl(), "--db-password-file",
            passwordFile.toString()}, o, e, Map.of())).as(err.toString()).isZero();
        assertThat(out.toString().lines()).hasSize(4).allSatisfy(line -> assertThat(line).contains("\"workerId\":\"w\""));

        assertThat(WorkerMain.run(new String[] {"rescore", "--db", cliUrl(), "--db-password-file",
            passwordFile.toString(), "--scorer", "includes"}, o, e, Map.of())).as(err.toString()).isZero();
        assertThat(out.toString()).contains("scoring 2 made with includes: 4 answers scored again");

        Path report = dir.resolve("report.html");
        assertThat(WorkerMain.run(new String[] {"report", "--db", cliUrl(), "--db-password-file",
            passwordFile.toString(), "--out", report.toString()}, o, e, Map.of())).as(err.toString()).isZero();
        assertThat(report).isRegularFile();
        assertThat(out.toString() + err.toString()).doesNotContain(db.password());
    }

    @Test
    void aWrongPasswordFailsInOneLineWithoutPrintingIt() throws Exception {
        String wrong = "wrong-" + db.password();
        Path passwordFile = Files.writeString(dir.resolve("pw"), wrong);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int exit = WorkerMain.run(new String[] {"results", "--db", cliUrl(), "--db-password-file",
            passwordFile.toString()}, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString().strip()).doesNotContain("\n").doesNotContain(wrong)
                .contains("cannot open result database " + db.url()).contains("password authentication failed");
    }

    // ---- helpers ----

    /** {@code postgresql://user@host:port/name}: the form a user types, without the password. */
    private String cliUrl() {
        return db.url().replace("jdbc:postgresql://", "postgresql://" + db.user() + "@");
    }

    /** Ends the coordinator's lock session from another one, as an administrator or a server restart would. */
    private void terminateLockSession() throws Exception {
        try (java.sql.Connection c = db.connect();
             java.sql.PreparedStatement kill = c.prepareStatement("SELECT pg_terminate_backend(pid)"
                     + " FROM pg_stat_activity WHERE datname = ? AND application_name LIKE 'panoptes coordinator %'")) {
            kill.setString(1, db.name());
            try (java.sql.ResultSet rs = kill.executeQuery()) {
                assertThat(rs.next()).as("the lock's session is visible").isTrue();
                assertThat(rs.getBoolean(1)).isTrue();
                assertThat(rs.next()).as("one lock session").isFalse();
            }
        }
    }

    private long storedRecords() throws Exception {
        try (java.sql.Connection c = db.connect();
             java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM panoptes_records")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String runIdOf(StringWriter err) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\(run ([0-9a-f]+)\\)").matcher(err.toString());
        assertThat(m.find()).as(err.toString()).isTrue();
        return m.group(1);
    }

    private Path suite(int vignettes) throws Exception {
        return QuestionSuite.write(dir, vignettes);
    }

    private CoordinatorSettings settings(Path suite, String label, Duration waitForWorkers) {
        return settings(suite, label, waitForWorkers, 4);
    }

    private CoordinatorSettings settings(Path suite, String label, Duration waitForWorkers, int jobSize) {
        // The same defaults as the command line's, so that the CLI computes the same run id.
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("unused.db"), jobSize, label, null, SpecParams.NONE, 3, waitForWorkers, Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("m"), "exact", 1, null, null);
    }

    private CoordinatorRun run(CoordinatorSettings settings, StringWriter err) {
        DatabaseTarget target = new DatabaseTarget.Postgres(db.url(), db.user(), db.password());
        return new CoordinatorRun(settings, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                false, "java -jar worker.jar").withDatabase(target);
    }

    private void startWorker(InetSocketAddress coordinator, String id) {
        startWorker(coordinator, id, 2, answers());
    }

    private void startWorker(InetSocketAddress coordinator, String id, int capacity, JobRunner runner) {
        WorkerOptions options = WorkerOptions.defaults().withModels(List.of("m"))
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, id, capacity, runner, options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private static JobRunner answers() {
        return (Job job) -> {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                records.add(new ResponseRecord(v.id(), v.expected(), job.model(), "stop", 5L, null));
            }
            return new JobOutcome(job.id(), records);
        };
    }
}
