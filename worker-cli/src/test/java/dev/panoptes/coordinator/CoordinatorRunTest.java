package dev.panoptes.coordinator;

import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.report.RunStats;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;
import static org.awaitility.Awaitility.await;

/** The coordinator command's run, in process, with real workers over loopback TCP. */
class CoordinatorRunTest {
    private static final String MODEL = "m";
    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
    }

    @Test
    void aRunStoresEveryVignetteAndSummarisesAccuracy() throws Exception {
        Path suite = suite(40);
        CoordinatorRun run = run(settings(suite, null, Duration.ofSeconds(30)))
                .onListening(address -> startWorker(address, "w1", null, answering()));

        assertThat(run.run()).isZero();

        assertThat(out.toString()).contains("Run complete").contains("40 of 40 stored")
                .contains("95% CI: Wilson, clustered by vignette")
                // Wilson(20/40): [0.352, 0.648]; Wald would say 0.343-0.657.
                .contains("m: 0.500 (95% CI 0.352-0.648, SE 0.080, n=40)");
        assertThat(err.toString()).contains("worker w1 registered from").contains("start workers with:");
        try (ResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.recordCount()).isEqualTo(40);
        }
    }

    @Test
    void aStoppedRunResumesWithoutSendingCompletedJobsAgain() throws Exception {
        Path suite = suite(64);
        CoordinatorSettings settings = settings(suite, null, Duration.ofSeconds(30));
        CountDownLatch someDone = new CountDownLatch(3);
        // Only three jobs are answered before the stop: with every answer at once, all 64 could
        // land in the store's first commit and the run finish before the interrupt is seen.
        AnswerGate gate = new AnswerGate(3);
        Thread coordinatorThread = Thread.currentThread();
        CoordinatorRun first = run(settings)
                .onListening(address -> startWorker(address, "w1", null, job -> {
                    gate.pass();
                    return TestJobs.echo(job);
                }))
                .alsoNotify(new ProgressListener() {
                    @Override
                    public void onCompleted(Job job, WorkerHandle worker, dev.panoptes.control.JobOutcome outcome,
                                            ResultStore.Receipt receipt) {
                        someDone.countDown();
                        if (someDone.getCount() == 0) {
                            coordinatorThread.interrupt();
                        }
                    }
                });

        assertThat(first.run()).isEqualTo(CoordinatorRun.EXIT_INTERRUPTED);
        Thread.interrupted();
        assertThat(err.toString()).contains("run the same command again to resume");
        Set<String> completedFirst = storedJobIds();
        assertThat(completedFirst).hasSize(3);
        workers.forEach(WorkerLoop::close);
        gate.open();

        Set<String> secondRunJobs = ConcurrentHashMap.newKeySet();
        CoordinatorRun second = run(settings)
                .onListening(address -> startWorker(address, "w2", null, job -> {
                    secondRunJobs.add(job.id().value());
                    return TestJobs.echo(job);
                }));

        assertThat(second.run()).isZero();
        assertThat(secondRunJobs).doesNotContainAnyElementsOf(completedFirst);
        assertThat(second.summary().jobsSkipped()).isEqualTo(completedFirst.size());
        // The summary covers the answers of both sittings: read back from the store, not counted as stored.
        assertThat(second.summaryCountedAsStored()).isFalse();
        assertThat(second.summary().answersStored()).isEqualTo(64);
        assertThat(out.toString()).contains("from an earlier run").contains("64 of 64 stored");
        try (ResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.recordCount()).isEqualTo(64);
        }
    }

    @Test
    void aWorkerWithTheWrongTokenIsRefusedAndTheCoordinatorSaysWhy() throws Exception {
        Path suite = suite(4);
        CoordinatorRun run = run(settings(suite, "right-token", Duration.ofSeconds(2)))
                .onListening(address -> startWorker(address, "intruder", "wrong-token", answering()));

        assertThat(run.run()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);

        assertThat(err.toString()).contains("worker rejected from").containsIgnoringCase("token")
                .doesNotContain("right-token").doesNotContain("wrong-token");
        // Once: the worker stops after a rejection only its operator can fix, and is not retried.
        assertThat(err.toString().lines().filter(l -> l.startsWith("worker rejected from"))).hasSize(1);
        assertThat(out.toString()).contains("Run INCOMPLETE").contains("no worker connected");
    }

    @Test
    void jobsOfAWorkerThatDiesAreStoredOnceByAnother() throws Exception {
        Path suite = suite(48);
        AtomicInteger started = new AtomicInteger();
        CountDownLatch never = new CountDownLatch(1);
        CoordinatorRun run = run(settings(suite, null, Duration.ofSeconds(30)))
                .onListening(address -> {
                    // The doomed worker holds its jobs forever; closing its loop drops the connection.
                    WorkerLoop doomed = startWorker(address, "doomed", null, job -> {
                        started.incrementAndGet();
                        never.await();
                        return TestJobs.echo(job);
                    });
                    threads.submit(() -> {
                        await().atMost(10, TimeUnit.SECONDS).until(() -> started.get() >= 1);
                        doomed.close();
                        startWorker(address, "survivor", null, TestJobs.echoRunner());
                        return null;
                    });
                });

        assertThat(run.run()).isZero();

        assertThat(run.summary().redeliveries()).isPositive();
        List<StoredRecord> records = new ArrayList<>();
        try (ResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(records::add);
        }
        assertThat(records).hasSize(48).allSatisfy(r -> assertThat(r.workerId()).isEqualTo("survivor"));
        Set<String> keys = new HashSet<>();
        records.forEach(r -> keys.add(r.jobId() + "/" + r.record().vignetteId()));
        assertThat(keys).hasSize(48);
    }

    @Test
    void aSecondCoordinatorOnTheSameDbIsRefusedInOneLineWhileTheFirstCompletes() throws Exception {
        Path suite = suite(16);
        Path db = dir.resolve("r.db");
        CompletableFuture<InetSocketAddress> listening = new CompletableFuture<>();
        CoordinatorRun first = run(settings(suite, null, Duration.ofSeconds(30))).onListening(listening::complete);
        Future<Integer> firstExit = threads.submit(first::run);
        InetSocketAddress address = listening.get(15, TimeUnit.SECONDS);

        StringWriter secondOut = new StringWriter();
        StringWriter secondErr = new StringWriter();
        int secondExit = WorkerMain.run(new String[] {"coordinator", "--suite", suite.toString(), "--model", MODEL, "--db", db.toString(),
                "--listen", "127.0.0.1:0"}, new PrintWriter(secondOut, true), new PrintWriter(secondErr, true), Map.of());

        assertThat(secondExit).isEqualTo(1);
        assertThat(secondOut.toString()).isEmpty();
        String prefix = "worker.jar coordinator: " + db + " is in use by another coordinator (pid "
                + ProcessHandle.current().pid() + " on " + InetAddress.getLocalHost().getHostName() + ", listening on "
                + CoordinatorRun.hostPort(address) + ", since ";
        assertThat(secondErr.toString().lines()).singleElement(STRING)
                .matches(Pattern.quote(prefix) + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"
                        + Pattern.quote("); stop it, or use another --db"));

        startWorker(address, "w1", null, TestJobs.echoRunner());
        assertThat(firstExit.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(out.toString()).contains("16 of 16 stored");

        // The finished run let go: the same command again now resumes with nothing left to send.
        CoordinatorRun third = run(settings(suite, null, Duration.ofSeconds(30)));
        assertThat(third.run()).isZero();
        assertThat(third.summary().jobsSkipped()).isEqualTo(4);
    }

    @Test
    void aMisconfiguredWorkerIsQuarantinedAndNamedWhileTheOthersCompleteTheRun() throws Exception {
        Path suite = suite(40);
        CoordinatorRun run = run(settings(suite, null, Duration.ofSeconds(30)))
                .onListening(address -> {
                    startWorker(address, "gpu-07", null, job -> {
                        throw new WorkerFaultException("the model API at http://gpu-07:8000/v2 answered HTTP 404 for"
                                + " model 'llama-3.1-8b'");
                    });
                    startWorker(address, "gpu-01", null, job -> {
                        // Busy long enough that the broken worker is offered more than two jobs.
                        new CountDownLatch(1).await(50, TimeUnit.MILLISECONDS);
                        return TestJobs.echo(job);
                    });
                });

        assertThat(run.run()).isZero();

        assertThat(err.toString()).contains("worker gpu-07 quarantined: 3 failures in a row were its own, not its"
                + " jobs'; no new jobs for 30s. Last: ").contains("answered HTTP 404 for model 'llama-3.1-8b'");
        assertThat(out.toString()).contains("Run complete").contains("40 of 40 stored")
                .contains("quarantined: worker gpu-07, 1 time; its last failure: ");
        assertThat(run.summary().failures()).isEmpty();
    }

    @Test
    void aConsoleThatStopsTakingOutputStallsNeitherTheRunNorItsWorkers() throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        PrintWriter stalled = new PrintWriter(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                awaitQuietly();
            }

            @Override
            public void write(byte[] b, int off, int len) {
                awaitQuietly();
            }

            private void awaitQuietly() {
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, true);
        Path suite = suite(40);
        // Heartbeats every 100 ms and a 1 s timeout: a stalled selector thread would lose the worker.
        CoordinatorSettings quick = new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                suite, dir.resolve("r.db"), 4, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30),
                Duration.ofMillis(100), Duration.ofSeconds(1), null, List.of(MODEL), "exact", 1, null, null);
        CoordinatorRun run = new CoordinatorRun(quick,
                new PrintWriter(out, true), stalled, false, "java -jar worker.jar")
                .onListening(address -> startWorker(address, "w1", null, job -> {
                    // Slow enough that the run (5 rounds of 2 jobs) outlives the heartbeat timeout.
                    new CountDownLatch(1).await(300, TimeUnit.MILLISECONDS);
                    return TestJobs.echo(job);
                }));
        try {
            assertThat(run.run()).isZero();
            assertThat(out.toString()).contains("Run complete").contains("40 of 40 stored");
            assertThat(run.summary().elapsed()).isGreaterThan(Duration.ofSeconds(1));
        } finally {
            unblock.countDown();
        }
    }

    @Test
    void aCommandThatDiffersInItsModelsIsANewRunNamingTheOldOneAndTheSameCommandResumesScoringAgainForAnotherScorer()
            throws Exception {
        Path suite = suite(8);
        CoordinatorRun first = run(settings(suite, List.of(MODEL), "exact"))
                .onListening(address -> startWorker(address, "w1", null, answering(), List.of(MODEL, "m2")));
        assertThat(first.run()).as(err.toString()).isZero();
        String runA = first.summary().stats().info().runId();
        assertThat(err.toString()).contains("new run " + runA + "\n");

        err.getBuffer().setLength(0);
        out.getBuffer().setLength(0);
        CoordinatorRun second = run(settings(suite, List.of("m2"), "exact"))
                .onListening(address -> startWorker(address, "w2", null, answering(), List.of(MODEL, "m2")));
        assertThat(second.run()).as(err.toString()).isZero();
        String runB = second.summary().stats().info().runId();
        assertThat(runB).isNotEqualTo(runA);
        assertThat(err.toString()).contains("new run " + runB + ": run " + runA
                + " of this suite differs in models [m] -> [m2]\n");
        assertThat(out.toString()).contains("answers:     8 of 8 stored, 0 missing");
        assertThat(second.summary().stats().models()).extracting(RunStats.ModelStats::model).containsExactly("m2");

        // The first command again, with another scorer: the same run, resumed; its answers scored again.
        err.getBuffer().setLength(0);
        out.getBuffer().setLength(0);
        CoordinatorRun again = run(settings(suite, List.of(MODEL), "includes"));
        assertThat(again.run()).as(err.toString()).isZero();
        assertThat(again.summary().stats().info().runId()).isEqualTo(runA);
        assertThat(err.toString()).contains("resuming run " + runA + ": 8 of 8 answers stored\n")
                .contains("run " + runA + ": scoring 2 with includes (scoring 1 used exact, and is kept: report"
                        + " --scoring 1); 8 stored answers scored again");
        assertThat(out.toString()).contains("accuracy (includes, scoring 2)");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.scorings(runA)).extracting(Scoring::number, Scoring::scorer).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(1, "exact"), org.assertj.core.groups.Tuple.tuple(2, "includes"));
            assertThat(store.scorings(runB)).hasSize(1);
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactlyInAnyOrder(runA, runB);
            assertThat(store.runs()).allSatisfy(r -> {
                assertThat(r.manifest()).isNotNull();
                assertThat(r.finishedAt()).isNotNull();
            });
        }
    }

    private CoordinatorSettings settings(Path suite, List<String> models, String scorer) {
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, models, scorer, 1, null, null);
    }

    private CoordinatorRun run(CoordinatorSettings settings) {
        return new CoordinatorRun(settings, new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar");
    }

    private CoordinatorSettings settings(Path suite, String token, Duration waitForWorkers) {
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", token, SpecParams.NONE, 3, waitForWorkers, Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of(MODEL), "exact", 1, null, null);
    }

    private WorkerLoop startWorker(InetSocketAddress coordinator, String id, String token, JobRunner runner) {
        return startWorker(coordinator, id, token, runner, List.of(MODEL));
    }

    private WorkerLoop startWorker(InetSocketAddress coordinator, String id, String token, JobRunner runner,
                                   List<String> models) {
        WorkerOptions options = WorkerOptions.defaults().withToken(token).withModels(models)
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, id, 2, runner, options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
        return loop;
    }

    /** Answers even-numbered questions right and odd-numbered ones wrong. */
    private static JobRunner answering() {
        return job -> {
            List<dev.panoptes.control.ResponseRecord> records = new ArrayList<>();
            for (var v : job.spec().vignettes()) {
                int n = Integer.parseInt(v.id().substring(1));
                records.add(new dev.panoptes.control.ResponseRecord(v.id(), n % 2 == 0 ? v.expected() : "wrong"));
            }
            return new dev.panoptes.control.JobOutcome(job.id(), records);
        };
    }

    private Set<String> storedJobIds() {
        Set<String> ids = new HashSet<>();
        try (ResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(r -> ids.add(r.jobId().value()));
        }
        return ids;
    }

    private Path suite(int vignettes) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < vignettes; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"question ").append(i)
                    .append("\",\"expected\":\"answer ").append(i).append("\"}\n");
        }
        Path file = dir.resolve("suite.jsonl");
        Files.writeString(file, sb.toString());
        return file;
    }

}
