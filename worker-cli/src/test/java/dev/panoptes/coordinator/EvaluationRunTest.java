package dev.panoptes.coordinator;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.awaitility.core.ConditionTimeoutException;
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
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The evaluation side of a coordinator run, in process, with real workers over loopback TCP: the
 * run owns its models, epochs and scorer; a model-graded scorer grades on the fleet.
 */
class EvaluationRunTest {
    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    /**
     * Which worker's jobs wait, before they are answered, until the coordinator has said a line
     * containing what; none by default.
     */
    private volatile Map.Entry<String, String> heldUntilSaid;
    /** Every job each worker ran: worker id, then job. */
    private final Queue<Map.Entry<String, Job>> ran = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
    }

    @Test
    void twoWorkersStartedWithDifferentModelsNeverMixTheirAnswersIntoOneRun() throws Exception {
        String named = "worker w-qwen serves none of this run's models (llama-3.1-8b): it serves qwen2.5-7b;"
                + " it gets no work";
        // w-llama alone would finish the run's three jobs before w-qwen has registered, and the
        // coordinator would never meet it: its answers wait until w-qwen has been named.
        heldUntilSaid = Map.entry("w-llama", named);
        CoordinatorRun run = run(settings(List.of("llama-3.1-8b"), "exact", 1, null))
                .onListening(address -> {
                    startWorker(address, "w-llama", List.of("llama-3.1-8b"));
                    startWorker(address, "w-qwen", List.of("qwen2.5-7b"));
                });

        assertThat(run.run()).isZero();

        List<StoredRecord> records = records();
        assertThat(records).hasSize(12);
        assertThat(records).allSatisfy(r -> {
            assertThat(r.context().model()).isEqualTo("llama-3.1-8b");
            assertThat(r.record().model()).as("the model the API reported").isEqualTo("llama-3.1-8b");
            assertThat(r.workerId()).isEqualTo("w-llama");
        });
        assertThat(ran).allSatisfy(e -> assertThat(e.getKey()).isEqualTo("w-llama"));
        assertThat(err.toString()).contains(named);
    }

    @Test
    void twoModelsAndThreeEpochsAskEachVignetteSixTimesWithDistinctSeedsAndAreCompared() throws Exception {
        CoordinatorRun run = run(settings(List.of("big", "small"), "normalized", 3, null))
                .onListening(address -> {
                    startWorker(address, "w-both", List.of("big", "small"));
                    startWorker(address, "w-big", List.of("big"));
                });

        assertThat(run.run()).isZero();

        List<StoredRecord> records = records();
        assertThat(records).hasSize(12 * 2 * 3);
        for (String model : List.of("big", "small")) {
            for (int epoch = 0; epoch < 3; epoch++) {
                int e = epoch;
                assertThat(records).filteredOn(r -> r.context().model().equals(model) && r.context().epoch() == e)
                        .hasSize(12);
            }
        }
        // No --seed: epoch 0 is sent without one (as a one-epoch run sends it), epoch e > 0 with seed e.
        Set<Long> seeds = new java.util.HashSet<>();
        ran.forEach(e -> seeds.add(e.getValue().spec().params().seed()));
        assertThat(seeds).containsExactlyInAnyOrder(null, 1L, 2L);
        assertThat(ran).filteredOn(e -> e.getKey().equals("w-big"))
                .allSatisfy(e -> assertThat(e.getValue().model()).isEqualTo("big"));
        // big answers every vignette right; small gets odd vignettes wrong in epoch 0 only.
        String summary = out.toString();
        // All right in three epochs that agree: 12 vignettes' worth of evidence, Wilson(1, 12) = [0.758, 1].
        assertThat(summary).contains("accuracy (normalized, scoring 1), mean score per model; 95% CI: Wilson, clustered by"
                        + " vignette:")
                .contains("big: 1.000 (95% CI 0.758-1.000, SE 0.000, n=36, 12 vignettes)")
                .contains("paired differences, paired t over vignettes")
                .contains("small - big: -0.167, 95% CI ");
        assertThat(records).filteredOn(r -> r.context().model().equals("small") && r.context().epoch() == 0
                        && r.record().vignetteId().equals("q1"))
                .singleElement().satisfies(r -> assertThat(r.score().score()).isEqualTo(0.0));
    }

    @Test
    void aModelGradedRunGradesOnWorkersThatServeTheJudgeAndKeepsAnUnreadableVerdictOutOfTheScore()
            throws Exception {
        CoordinatorRun run = run(settings(List.of("m"), "judge:judge-1", 1, null))
                .onListening(address -> {
                    startWorker(address, "w-m", List.of("m"));
                    startWorker(address, "w-judge", List.of("judge-1"));
                });

        // The unreadable verdict leaves its answer ungraded: the run says so and exits 3.
        assertThat(run.run()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);
        assertThat(out.toString()).contains("grading:     1 answer left ungraded by the judge (first: q3: not graded");

        List<StoredRecord> records = records();
        assertThat(records).hasSize(12);
        assertThat(ran).filteredOn(e -> e.getValue().model().equals("judge-1"))
                .isNotEmpty().allSatisfy(e -> assertThat(e.getKey()).isEqualTo("w-judge"));
        assertThat(ran).filteredOn(e -> e.getValue().model().equals("m"))
                .allSatisfy(e -> assertThat(e.getKey()).isEqualTo("w-m"));
        StoredRecord unreadable = records.stream().filter(r -> r.record().vignetteId().equals("q3")).findFirst()
                .orElseThrow();
        assertThat(unreadable.score().score()).isNull();
        assertThat(unreadable.score().explanation()).startsWith("not graded: the judge's reply (from worker w-judge)"
                + " was not a verdict");
        assertThat(records).filteredOn(r -> !r.record().vignetteId().equals("q3")).allSatisfy(r -> {
            assertThat(r.score().scorer()).isEqualTo("judge:judge-1");
            assertThat(r.score().score()).isEqualTo(r.record().response().equals(r.context().expected()) ? 1.0 : 0.0);
            assertThat(r.score().explanation()).isEqualTo("compared by the test's judge");
        });
        // q1, q5 and q9 are wrong, q3 is unscored: 8 of 11.
        assertThat(out.toString()).contains("m: 0.727 (95% CI 0.434-0.903, SE 0.141, n=11); 1 answer unscored");
    }

    @Test
    void whenNoWorkerServesTheJudgeTheAnswersStayUnscoredTheRunSaysSoAndExits3() throws Exception {
        CoordinatorSettings base = settings(List.of("m"), "judge:absent-judge", 1, null);
        CoordinatorSettings settings = new CoordinatorSettings(base.listen(), base.suite(), base.db(), base.jobSize(),
                "", null, SpecParams.NONE, 3, Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofSeconds(2),
                null, base.models(), base.scorer(), 1, null, null);
        CoordinatorRun run = run(settings).onListening(address -> startWorker(address, "w-m", List.of("m")));

        assertThat(run.run()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);

        assertThat(out.toString()).contains("answers:     12 of 12 stored, 0 missing")
                .contains("accuracy:    no answer scored: 12 unscored (no expected answer, or no grade)")
                .contains("grading:     3 grading jobs failed, their answers are unscored")
                .contains("no connected worker served model 'absent-judge'")
                .contains("run the same command again to grade them");
        assertThat(records()).allSatisfy(r -> assertThat(r.score().score()).isNull());
    }

    @Test
    void fewShotExamplesAndChatVignettesReachTheModelAsTurnsAndCsvSuitesRun() throws Exception {
        Path suite = Files.writeString(dir.resolve("suite.csv"), "id,prompt,expected,topic\n"
                + "q0,\"What is 1+1, in digits?\",2,sums\nq1,Capital of France?,Paris,geo\n");
        Path shots = Files.writeString(dir.resolve("shots.jsonl"), "{\"input\": \"2+2?\", \"answer\": \"4\"}\n");
        CoordinatorSettings settings = new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                0), suite, dir.resolve("r.db"), 4, "", null, new SpecParams("Be brief.", null, null, null), 3,
                Duration.ofSeconds(30), Duration.ofMillis(200), Duration.ofSeconds(2), null, List.of("m"), "exact", 1,
                shots, "topic");
        CoordinatorRun run = run(settings).onListening(address -> startWorker(address, "w", List.of("m")));

        assertThat(run.run()).isZero();

        Job job = ran.peek().getValue();
        Vignette v = job.spec().vignettes().get(0);
        assertThat(job.spec().params().system()).isEqualTo("Be brief.");
        assertThat(v.messages()).containsExactly(ChatMessage.user("2+2?"), ChatMessage.assistant("4"),
                ChatMessage.user("What is 1+1, in digits?"));
        assertThat(records()).filteredOn(r -> r.record().vignetteId().equals("q1")).singleElement()
                .satisfies(r -> assertThat(r.context().metadataJson()).isEqualTo("{\"topic\":\"geo\"}"));
        assertThat(out.toString()).contains("topic=geo: ").contains("topic=sums: ");
    }

    // ---- helpers ----

    /**
     * Answers as model {@code params.model}: model "small" gets odd vignettes wrong in epoch 0
     * (sent without a seed); every other model answers right. A judge model grades by comparing the answer with
     * the expected one, except for vignette q3, where it replies with prose.
     */
    private JobRunner runner(String workerId) {
        return job -> {
            Map.Entry<String, String> hold = heldUntilSaid;
            if (hold != null && hold.getKey().equals(workerId)) {
                try {
                    await().atMost(Duration.ofSeconds(30)).until(() -> err.toString().contains(hold.getValue()));
                } catch (ConditionTimeoutException e) {
                    throw new AssertionError("the coordinator did not say \"" + hold.getValue() + "\" within 30 s;"
                            + " it said:\n" + err, e);
                }
            }
            ran.add(Map.entry(workerId, job));
            String model = job.model();
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                String text;
                if (model.startsWith("judge")) {
                    text = v.id().equals("q3") ? "Looks fine to me." : verdict(v.messages().get(1).content());
                } else {
                    int n = Integer.parseInt(v.id().substring(1));
                    boolean wrong = model.equals("small") && n % 2 == 1 && job.spec().params().seed() == null
                            || model.equals("m") && n % 4 == 1;
                    text = wrong ? "wrong" : (v.expected() == null ? "?" : v.expected());
                }
                records.add(new ResponseRecord(v.id(), text, model, "stop", 5L, null));
            }
            return new JobOutcome(job.id(), records);
        };
    }

    private static String verdict(String judgePrompt) {
        Matcher expected = Pattern.compile("<expected_answer>\\n(.*?)\\n</expected_answer>", Pattern.DOTALL)
                .matcher(judgePrompt);
        Matcher answer = Pattern.compile("<answer>\\n(.*?)\\n</answer>", Pattern.DOTALL).matcher(judgePrompt);
        boolean same = expected.find() && answer.find() && expected.group(1).equals(answer.group(1));
        return "```json\n{\"score\": " + (same ? 1 : 0) + ", \"explanation\": \"compared by the test's judge\"}\n```";
    }

    private void startWorker(InetSocketAddress coordinator, String id, List<String> models) {
        WorkerOptions options = WorkerOptions.defaults().withModels(models)
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, id, 2, runner(id), options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private CoordinatorRun run(CoordinatorSettings settings) {
        return new CoordinatorRun(settings, new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar");
    }

    private CoordinatorSettings settings(List<String> models, String scorer, int epochs, String groupBy)
            throws Exception {
        Path suite = QuestionSuite.write(dir, 12);
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, models, scorer, epochs, null, groupBy);
    }

    private List<StoredRecord> records() {
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.forEachRecord(records::add);
        }
        return records;
    }
}
