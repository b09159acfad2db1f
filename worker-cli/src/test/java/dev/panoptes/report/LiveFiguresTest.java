package dev.panoptes.report;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RecordScoring;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.coordinator.FailedAnswers;
import dev.panoptes.coordinator.RunSummary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The figures counted as a run's answers are stored ({@link LiveFigures}, the coordinator's
 * summary) against those read back from the store ({@link RunDataLoader#stats}), on a run with
 * what the figures treat apart: two models, three epochs, a group-by key, failed answers,
 * unscored answers, a job failed for good, a partial score, latencies past the table, answers
 * stored in batches and one by one, in an order that is not the store's reading order; and the
 * cases where they are not the store's and must be read back.
 */
class LiveFiguresTest {
    @TempDir
    Path dir;

    @Test
    void theFiguresCountedAsStoredAreThoseReadBackFromTheStore() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("live.db")).withScoring(SCORING)) {
            FailedAnswers.Counter liveFailed = new FailedAnswers.Counter();
            LiveFigures live = new LiveFigures("r", "topic", 40, liveFailed);
            store.onStored(live);
            store(store, "r", new Random(5), 40);

            RunStats counted = live.figures(store, 1);
            FailedAnswers.Counter readFailed = new FailedAnswers.Counter();
            RunStats read = RunDataLoader.stats(store, "r", 1, "topic", readFailed);

            assertThat(counted).as("every answer was stored under the listener").isNotNull();
            assertThat(live.counted()).isEqualTo(store.recordCount("r"));
            assertSameFigures(counted, read);
            assertThat(liveFailed.result()).isEqualTo(readFailed.result());
            assertThat(liveFailed.result().failed()).isPositive();
            RunStats.ModelStats a = counted.models().get(0);
            assertThat(a.byGroup()).containsOnlyKeys("algebra", "geometry");
            assertThat(a.unscored()).isPositive();
            assertThat(counted.totalFailures()).isEqualTo(1);
            assertThat(counted.scorers()).containsExactly("exact-ish");
        }
    }

    @Test
    void answersStoredBeforeItListenedAreReadBack() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("resumed.db")).withScoring(SCORING)) {
            Job first = job("r", "a", 0, 0, List.of(new Vignette("early", "q", "x", Map.of())));
            store.record(first, new JobOutcome(first.id(), List.of(answer("early", "x", null))), "w");
            LiveFigures live = new LiveFigures("r", null, 0, new FailedAnswers.Counter());
            store.onStored(live);
            store(store, "r", new Random(6), 10);

            assertThat(live.figures(store, 1)).as("an answer of an earlier sitting was not counted").isNull();
        }
    }

    @Test
    void anOutcomeStoredWithDuplicatesLeavesTheFiguresToTheStore() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("dup.db")).withScoring(SCORING)) {
            LiveFigures live = new LiveFigures("r", null, 0, new FailedAnswers.Counter());
            store.onStored(live);
            Vignette v1 = new Vignette("v1", "q", "x", Map.of());
            Vignette v2 = new Vignette("v2", "q", "x", Map.of());
            Job job = job("r", "a", 0, 0, List.of(v1, v2));
            store.record(job, new JobOutcome(job.id(), List.of(answer("v1", "x", null))), "w1");
            // Delivered again, whole: v1 is a duplicate, and the receipt does not say which row was.
            ResultStore.Receipt receipt = store.record(job,
                    new JobOutcome(job.id(), List.of(answer("v1", "x", null), answer("v2", "y", null))), "w2");
            assertThat(receipt).isEqualTo(new ResultStore.Receipt(1, 1));

            assertThat(live.figures(store, 1)).isNull();
            assertThat(RunDataLoader.stats(store, "r", 1, null, null).totalSamples()).isEqualTo(2);
        }
    }

    /** Exact match, except that "~x" scores a half: a partial score, so no pass@k. */
    private static final RecordScoring SCORING = new RecordScoring() {
        @Override
        public ScoreEntry score(Vignette vignette, ResponseRecord record) {
            if (vignette.expected() == null) {
                return null;
            }
            double s = record.response().equals(vignette.expected()) ? 1.0
                    : record.response().equals("~" + vignette.expected()) ? 0.5 : 0.0;
            return new ScoreEntry("exact-ish", s, null);
        }

        @Override
        public String spec() {
            return "exact-ish";
        }
    };

    /**
     * {@code count} vignettes (a multiple of 5; the last two without an expected answer) in two
     * topics, asked of models a and b over three epochs, five vignettes a job, stored in a shuffled
     * order, half in batches and half one by one; b's last job of epoch 2 fails for good.
     */
    private static void store(JdbcResultStore store, String runId, Random random, int count) {
        List<Vignette> vignettes = new ArrayList<>();
        for (int v = 0; v < count; v++) {
            vignettes.add(new Vignette("v" + v, "q" + v, v >= count - 2 ? null : "x",
                    Map.of("topic", v % 3 == 0 ? "geometry" : "algebra", "n", v)));
        }
        List<ResultStore.Answer> answers = new ArrayList<>();
        for (String model : List.of("a", "b")) {
            for (int epoch = 0; epoch < 3; epoch++) {
                for (int j = 0; j < count / 5; j++) {
                    Job job = job(runId, model, epoch, j, vignettes.subList(j * 5, j * 5 + 5));
                    if (model.equals("b") && epoch == 2 && j == count / 5 - 1) {
                        store.recordFailure(job, "HTTP 503 three times", 3);
                        continue;
                    }
                    List<ResponseRecord> records = new ArrayList<>();
                    for (Vignette v : job.spec().vignettes()) {
                        Long latency = random.nextInt(10) == 0 ? null
                                : random.nextInt(8) == 0 ? 70_000L + random.nextInt(5000) : 20L + random.nextInt(400);
                        String error = random.nextInt(12) == 0 ? "HTTP 400: refused" : null;
                        int pick = random.nextInt(5);
                        String response = error != null ? "" : pick < 3 ? "x" : pick == 3 ? "~x" : "y";
                        records.add(new ResponseRecord(v.id(), response, model, "stop", latency,
                                new Usage(10 + random.nextInt(5), 1), error));
                    }
                    answers.add(new ResultStore.Answer(job, new JobOutcome(job.id(), records), "w" + random.nextInt(2)));
                }
            }
        }
        Collections.shuffle(answers, random);
        // The run is not noted (no RunEntry lists its models): models show in the order first
        // stored, which is then the same both ways only when model a's answer comes first.
        for (int i = 0; !answers.get(0).job().model().equals("a"); i++) {
            Collections.swap(answers, 0, i);
        }
        int half = answers.size() / 2;
        List<ResultStore.Written> done = new ArrayList<>();
        for (int i = 0; i < half; i += 7) {
            store.recordAll(answers.subList(i, Math.min(half, i + 7)), done);
        }
        for (ResultStore.Answer a : answers.subList(half, answers.size())) {
            store.record(a.job(), a.outcome(), a.workerId());
        }
    }

    private static Job job(String runId, String model, int epoch, int j, List<Vignette> vignettes) {
        return new Job(JobId.of(runId + "-" + model + "-e" + epoch + "-" + j),
                new EvalSpec("s", vignettes, new SpecParams(null, null, null, null, model)), runId, epoch);
    }

    private static ResponseRecord answer(String vignette, String response, String error) {
        return new ResponseRecord(vignette, response, "a", "stop", 5L, new Usage(1, 1), error);
    }

    /**
     * Every figure the same, counts exactly and estimates to the last few bits (the sums are the
     * same, made in another order), and every accuracy line the summary prints the same.
     */
    private static void assertSameFigures(RunStats counted, RunStats read) {
        assertThat(counted.groupBy()).isEqualTo(read.groupBy());
        assertThat(counted.models()).hasSameSizeAs(read.models());
        for (int i = 0; i < read.models().size(); i++) {
            RunStats.ModelStats c = counted.models().get(i);
            RunStats.ModelStats r = read.models().get(i);
            assertThat(List.of(c.model(), c.samples(), c.scored(), c.unscored(), c.promptTokens(), c.completionTokens(),
                    c.failures(), c.failedAnswers())).isEqualTo(List.of(r.model(), r.samples(), r.scored(), r.unscored(),
                    r.promptTokens(), r.completionTokens(), r.failures(), r.failedAnswers()));
            StreamedFigures.close(c.accuracy(), r.accuracy());
            StreamedFigures.close(c.withoutFailed(), r.withoutFailed());
            assertThat(c.byGroup().keySet()).containsExactlyElementsOf(r.byGroup().keySet());
            r.byGroup().forEach((g, e) -> StreamedFigures.close(c.byGroup().get(g), e));
        }
        assertThat(counted.comparison()).hasSameSizeAs(read.comparison());
        for (int i = 0; i < read.comparison().size(); i++) {
            assertThat(counted.comparison().get(i).sharedVignettes()).isEqualTo(read.comparison().get(i).sharedVignettes());
            assertThat(counted.comparison().get(i).difference())
                    .isCloseTo(read.comparison().get(i).difference(), within(1e-12));
        }
        assertThat(counted.cacheHits()).isEqualTo(read.cacheHits());
        assertThat(counted.passAtK().byModel().keySet()).isEqualTo(read.passAtK().byModel().keySet());
        assertThat(counted.scorers()).isEqualTo(read.scorers());
        assertThat(counted.latencyP50Ms()).isEqualTo(read.latencyP50Ms());
        assertThat(counted.latencyP95Ms()).isEqualTo(read.latencyP95Ms());
        assertThat(counted.totalFailures()).isEqualTo(read.totalFailures());
        StringBuilder countedLines = new StringBuilder();
        RunSummary.renderAccuracy(countedLines, counted);
        StringBuilder readLines = new StringBuilder();
        RunSummary.renderAccuracy(readLines, read);
        assertThat(countedLines.toString()).isEqualTo(readLines.toString());
    }
}
