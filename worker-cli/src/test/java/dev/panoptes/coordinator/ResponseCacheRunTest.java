package dev.panoptes.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.cache.CachePolicy;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.AnswerCache;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.StoredRecord;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The response cache in a coordinator run, in process, with a real worker over loopback TCP whose
 * model counts the vignettes it is asked: a second run of the same requests asks nothing, and the
 * cases that must ask (no cache, sampling, expired answers) do; an interrupted run resumed stores
 * each answer once.
 */
class ResponseCacheRunTest {
    // Its workers all ask one stub model, so the run names that model server, as --model-id does.
    private static final SpecParams ZERO = new SpecParams(null, 0.0, null, null).withModelSource("model-id stub");

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    /** Every vignette the model was asked: its id. */
    private final Queue<String> asked = new ConcurrentLinkedQueue<>();
    /** What the model lets through at once. */
    private volatile AnswerGate gate = AnswerGate.OPEN;

    @AfterEach
    void stop() {
        gate.open();
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
    }

    @Test
    void aSecondRunWithAnotherLabelAsksTheModelNothingAndStoresEveryAnswerMarkedCached() throws Exception {
        Path suite = suite("suite.jsonl", 12);
        String first = runToEnd(settings(suite, "first", ZERO), CachePolicy.defaults());
        assertThat(asked).hasSize(12);
        asked.clear();

        String second = runToEnd(settings(suite, "second", ZERO), CachePolicy.defaults());

        assertThat(second).isNotEqualTo(first);
        assertThat(asked).as("vignettes asked of the model in the second run").isEmpty();
        assertThat(records(second)).hasSize(12).allSatisfy(r -> {
            assertThat(r.cachedFrom()).isEqualTo(first);
            assertThat(r.workerId()).isEqualTo(AnswerCache.WORKER_ID);
            assertThat(r.record().usage()).isEqualTo(new Usage(7, 2));
            assertThat(r.score().score()).isEqualTo(1.0);
        });
        assertThat(err.toString()).contains("response cache: 12 answers served from the database (1 source run)"
                + " without a model call; 0 of 12 left to ask");
        assertThat(out.toString()).contains("12 of 12 stored")
                .contains("cache hits:  all 12 answers served from the database without a model call (answered first in"
                        + " 1 earlier run)")
                .contains("m: 1.000")
                // The answers repeat their source's usage, but this run called no model: no tokens, no cost.
                .contains("tokens:      0 spent by this run's model calls (0 prompt + 0 completion)\n"
                        + "               108 more in the 12 answers the cache served (84 prompt + 24 completion),"
                        + " spent by the run that answered them\n");

        String jsonl = command("results", "--db", dir.resolve("r.db").toString(), "--run", second);
        ObjectMapper json = new ObjectMapper();
        for (String line : jsonl.split("\n")) {
            JsonNode row = json.readTree(line);
            assertThat(row.get("cached").asBoolean()).isTrue();
            assertThat(row.get("cachedFrom").asText()).isEqualTo(first);
        }
        List<String> csv = List.of(command("results", "--db", dir.resolve("r.db").toString(), "--format", "csv")
                .split("\r\n"));
        assertThat(csv.get(0)).endsWith(",scoring,cached,cachedFrom,costUsd");
        assertThat(csv.subList(1, csv.size())).hasSize(24)
                .filteredOn(row -> row.startsWith(first)).hasSize(12).allSatisfy(row -> assertThat(row).endsWith(",1,false,,"));
        assertThat(csv.subList(1, csv.size())).filteredOn(row -> row.startsWith(second))
                .allSatisfy(row -> assertThat(row).endsWith(",1,true," + first + ","));
        // An export without a cached answer (and without prices) has the same header: exports concatenate.
        String uncached = command("results", "--db", dir.resolve("r.db").toString(), "--run", first, "--format", "csv");
        assertThat(uncached.split("\r\n")[0]).isEqualTo(csv.get(0));
        assertThat(uncached.split("\r\n")[1]).endsWith(",1,false,,");
        assertThat(command("results", "--db", dir.resolve("r.db").toString(), "--run", first))
                .doesNotContain("cached");

        // The other tools' formats mark them too.
        Path lmEval = dir.resolve("lm-eval");
        command("export", "--db", dir.resolve("r.db").toString(), "--run", second, "--format", "lm-eval",
                "--out", lmEval.toString());
        try (var files = java.nio.file.Files.walk(lmEval)) {
            Path samples = files.filter(f -> f.getFileName().toString().startsWith("samples_")).findFirst().orElseThrow();
            for (String line : java.nio.file.Files.readAllLines(samples)) {
                // Per repeat (an epoch of the document): each was served by the cache.
                for (JsonNode p : json.readTree(line).get("panoptes").get("repeats")) {
                    assertThat(p.get("cached").asBoolean()).isTrue();
                    assertThat(p.get("cached_from").asText()).isEqualTo(first);
                }
            }
        }
        Path html = dir.resolve("report.html");
        command("report", "--db", dir.resolve("r.db").toString(), "--run", second, "--out", html.toString());
        assertThat(java.nio.file.Files.readString(html)).as("the report's sample table names each answer's source")
                .contains("cached from").contains("\"" + first + "\"");
        Path inspect = dir.resolve("inspect");
        command("export", "--db", dir.resolve("r.db").toString(), "--run", second, "--format", "inspect",
                "--out", inspect.toString());
        try (var files = java.nio.file.Files.list(inspect)) {
            Path log = files.filter(f -> f.getFileName().toString().endsWith("-m.json")).findFirst().orElseThrow();
            assertThat(json.readTree(log.toFile()).get("samples")).hasSize(12).allSatisfy(sample -> {
                assertThat(sample.get("metadata").get("panoptes").get("cached").asBoolean()).isTrue();
                assertThat(sample.get("metadata").get("panoptes").get("cached_from").asText()).isEqualTo(first);
            });
        }
    }

    @Test
    void noCacheSamplingAndNoTemperatureAskTheModelAgain() throws Exception {
        Path suite = suite("suite.jsonl", 8);
        runToEnd(settings(suite, "first", ZERO), CachePolicy.defaults());
        asked.clear();
        runToEnd(settings(suite, "no-cache", ZERO), CachePolicy.off());
        assertThat(asked).hasSize(8);
        assertThat(err.toString()).contains("response cache: off (--no-cache)");

        for (SpecParams sampling : List.of(new SpecParams(null, 0.7, null, null), SpecParams.NONE)) {
            runToEnd(settings(suite, "a", sampling), CachePolicy.defaults());
            asked.clear();
            String again = runToEnd(settings(suite, "b", sampling), CachePolicy.defaults());
            assertThat(asked).hasSize(8);
            assertThat(records(again)).allSatisfy(r -> assertThat(r.cached()).isFalse());
        }
        assertThat(err.toString()).contains("response cache: off: temperature 0.7 samples; only --temperature 0 is"
                + " cached").contains("response cache: off: no --temperature");
    }

    @Test
    void anAnswerOlderThanTheMaximumAgeIsAskedAgain() throws Exception {
        Path suite = suite("suite.jsonl", 4);
        runToEnd(settings(suite, "first", ZERO), CachePolicy.defaults());
        asked.clear();

        // Every answer of the first run is older than a nanosecond by now.
        runToEnd(settings(suite, "second", ZERO), CachePolicy.maxAge(Duration.ofNanos(1)));

        assertThat(asked).hasSize(4);
        assertThat(err.toString()).contains("response cache: none of the 4 requests was answered before");
    }

    @Test
    void anInterruptedRunServedPartlyFromTheCacheResumesStoringEachAnswerOnce() throws Exception {
        // The first run answers q0..q9; the second asks q0..q19 in jobs of 4: two jobs are served
        // whole, one holds q8, q9 (served) and q10, q11 (asked), and three are asked.
        runToEnd(settings(suite("first.jsonl", 10), "", ZERO), CachePolicy.defaults());
        asked.clear();
        CoordinatorSettings settings = settings(suite("second.jsonl", 20), "", ZERO);
        Thread coordinator = Thread.currentThread();
        // The model answers the first job it is asked and holds the others until the stop, so the
        // run cannot complete before the interrupt from its first completion is seen (it would exit 0).
        gate = new AnswerGate(1);
        CoordinatorRun interrupted = run(settings, CachePolicy.defaults())
                .onListening(address -> startWorker(address))
                .alsoNotify(new ProgressListener() {
                    @Override
                    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome,
                                            ResultStore.Receipt receipt) {
                        coordinator.interrupt();
                    }
                });
        assertThat(interrupted.run()).isEqualTo(CoordinatorRun.EXIT_INTERRUPTED);
        Thread.interrupted();
        gate.open();
        workers.forEach(WorkerLoop::close);
        gate = AnswerGate.OPEN;

        CoordinatorRun resumed = run(settings, CachePolicy.defaults()).onListening(address -> startWorker(address));
        assertThat(resumed.run()).isZero();

        assertThat(asked).as("no served vignette is ever asked").noneMatch(id -> Integer.parseInt(id.substring(1)) < 10);
        String runId = resumed.summary().stats().info().runId();
        List<StoredRecord> records = records(runId);
        assertThat(records).hasSize(20);
        assertThat(records).extracting(r -> r.record().vignetteId()).doesNotHaveDuplicates();
        assertThat(records).filteredOn(StoredRecord::cached).hasSize(10)
                .allSatisfy(r -> assertThat(Integer.parseInt(r.record().vignetteId().substring(1))).isLessThan(10));
        assertThat(records).filteredOn(r -> r.record().vignetteId().equals("q10")).singleElement()
                .satisfies(r -> assertThat(r.jobId().value()).endsWith("-0002"));
        assertThat(out.toString()).contains("20 of 20 stored").contains("cache hits:  10 answers");
    }

    @Test
    void noCacheWithAMaximumAgeIsRefusedWithExit2() throws Exception {
        String[] args = {"coordinator", "--suite", suite("suite.jsonl", 1).toString(), "--model", "m",
            "--db", dir.resolve("r.db").toString(), "--no-cache", "--cache-max-age", "1d"};
        StringWriter cliErr = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(new StringWriter(), true), new PrintWriter(cliErr, true),
                Map.of());
        assertThat(exit).isEqualTo(2);
        assertThat(cliErr.toString()).contains("Invalid value for option '--cache-max-age'")
                .contains("--no-cache turns the cache off");
        assertThat(Files.exists(dir.resolve("r.db"))).isFalse();
    }

    // ---- helpers ----

    /** Runs to the end with one worker; returns the run id. */
    private String runToEnd(CoordinatorSettings settings, CachePolicy cache) throws Exception {
        CoordinatorRun run = run(settings, cache).onListening(this::startWorker);
        assertThat(run.run()).isZero();
        workers.forEach(WorkerLoop::close);
        workers.clear();
        return run.summary().stats().info().runId();
    }

    private CoordinatorRun run(CoordinatorSettings settings, CachePolicy cache) {
        return new CoordinatorRun(settings, new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar").withCache(cache);
    }

    /**
     * A model that answers right, reporting 7 prompt and 2 completion tokens, and counts what it is
     * asked; it answers a job once {@link #gate} lets it through.
     */
    private JobRunner model() {
        return job -> {
            gate.pass();
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                asked.add(v.id());
                records.add(new ResponseRecord(v.id(), v.expected(), "m", "stop", 3L, new Usage(7, 2)));
            }
            return new JobOutcome(job.id(), records);
        };
    }

    private void startWorker(InetSocketAddress coordinator) {
        WorkerOptions options = WorkerOptions.defaults().withModels(List.of("m"))
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, "w", 2, model(), options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private CoordinatorSettings settings(Path suite, String label, SpecParams params) {
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, label, null, params, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("m"), "exact", 1, null, null);
    }

    private Path suite(String name, int vignettes) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < vignettes; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"question ").append(i)
                    .append("\",\"expected\":\"Answer ").append(i).append("\"}\n");
        }
        return Files.writeString(dir.resolve(name), sb.toString());
    }

    private List<StoredRecord> records(String runId) {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(runId, records::add);
        }
        return records;
    }

    private static String command(String... args) {
        StringWriter cliOut = new StringWriter();
        StringWriter cliErr = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(cliOut, true), new PrintWriter(cliErr, true), new HashMap<>());
        assertThat(exit).as(cliErr.toString()).isZero();
        return cliOut.toString();
    }
}
