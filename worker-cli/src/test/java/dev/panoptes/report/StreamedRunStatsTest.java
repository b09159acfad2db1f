package dev.panoptes.report;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run's figures computed from its answers streamed from the store ({@link RunDataLoader#stats},
 * none held) against those of every answer loaded, on a stored run with what the figures treat
 * apart: two models, three epochs, a group-by key, failed answers (scored 0, and the figure
 * without them), answers without an expected answer (unscored), a job that failed for good,
 * latencies past the latency table and none, partial scores in a second run (no pass@k).
 */
class StreamedRunStatsTest {
    @TempDir
    Path dir;

    @Test
    void theStreamedFiguresAreThoseOfEveryAnswerLoaded() {
        Random random = new Random(7);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("s.db"))) {
            store(store, "plain", random, false, 30);
            store(store, "partial", random, true, 30);

            for (String run : List.of("plain", "partial")) {
                StreamedFigures.assertAgree(store, run);
            }
            RunStats plain = RunDataLoader.stats(store, "plain", 0, "topic", null);
            assertThat(plain.models()).extracting(RunStats.ModelStats::model).containsExactly("a", "b");
            RunStats.ModelStats a = plain.models().get(0);
            assertThat(a.samples()).isEqualTo(30 * 3);
            // Two vignettes have no expected answer: unscored, unless the answer failed (then 0).
            assertThat(a.unscored()).isBetween(1, 2 * 3);
            assertThat(a.failedAnswers()).isPositive();
            assertThat(a.withoutFailed().n()).isEqualTo(a.scored() - a.failedAnswers());
            assertThat(a.byGroup()).containsOnlyKeys("algebra", "geometry");
            assertThat(plain.totalFailures()).isEqualTo(1);
            assertThat(plain.passAtK().byModel()).containsOnlyKeys("a", "b");
            assertThat(plain.comparison()).hasSize(1);
            assertThat(plain.comparison().get(0).sharedVignettes()).isEqualTo(28);
            assertThat(plain.latencyP95Ms()).isGreaterThan(LatencyCounts.TABLE_MS);
            assertThat(plain.workers()).as("no answer's job is held").isEmpty();
            assertThat(RunDataLoader.stats(store, "partial", 0, null, null).passAtK().isEmpty()).isTrue();
        }
    }

    @Test
    void theFailedAnswersCountedWhileStreamingAreThoseOfTheLoadedRows() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("f.db"))) {
            store(store, "plain", new Random(3), false, 30);
            dev.panoptes.coordinator.FailedAnswers.Counter counted = new dev.panoptes.coordinator.FailedAnswers.Counter();
            RunDataLoader.stats(store, "plain", 0, null, counted);

            assertThat(counted.result()).isEqualTo(
                    dev.panoptes.coordinator.FailedAnswers.of(RunDataLoader.load(store, "plain")));
            assertThat(counted.result().failed()).isPositive();
        }
    }

    @Test
    void onPostgresqlTheRecordsComeThroughTheCursorPastItsFetchSize() {
        // 100 vignettes x 2 models x 3 epochs, less one failed job: more rows than one fetch
        // (RecordRows.FETCH_ROWS), read in a transaction as PostgreSQL's driver streams them.
        TestPostgres.Database db = TestPostgres.freshDatabase();
        try (JdbcResultStore store = db.open()) {
            store(store, "pg", new Random(11), false, 100);
            assertThat(store.recordCount("pg")).isEqualTo(600 - 5);

            StreamedFigures.assertAgree(store, "pg");
            assertThat(RunDataLoader.stats(store, "pg", 0, null, null).totalSamples()).isEqualTo(595);
        }
    }

    @Test
    void aRunTheStoreDoesNotHoldIsRefusedNamingIt() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("e.db"))) {
            assertThatThrownBy(() -> RunDataLoader.stats(store, "nope", 0, null, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no run 'nope'");
        }
    }

    /**
     * {@code count} vignettes (a multiple of 5; the last two without an expected answer) in two
     * topics, asked of models a and b over three epochs, one job of five vignettes each; b's last
     * job of epoch 2 fails for good.
     */
    private static void store(JdbcResultStore store, String runId, Random random, boolean partial, int count) {
        List<Vignette> vignettes = new ArrayList<>();
        for (int v = 0; v < count; v++) {
            vignettes.add(new Vignette("v" + v, "q" + v, v >= count - 2 ? null : "x",
                    Map.of("topic", v % 3 == 0 ? "geometry" : "algebra")));
        }
        for (String model : List.of("a", "b")) {
            for (int epoch = 0; epoch < 3; epoch++) {
                for (int j = 0; j < count / 5; j++) {
                    List<Vignette> chunk = vignettes.subList(j * 5, j * 5 + 5);
                    Job job = new Job(JobId.of(runId + "-" + model + "-e" + epoch + "-000" + j),
                            new EvalSpec("s", chunk, new SpecParams(null, null, null, null, model)), runId, epoch);
                    if (model.equals("b") && epoch == 2 && j == count / 5 - 1) {
                        store.recordFailure(job, "HTTP 503 three times", 3);
                        continue;
                    }
                    List<ResponseRecord> records = new ArrayList<>();
                    for (Vignette v : chunk) {
                        Long latency = random.nextInt(10) == 0 ? null
                                : random.nextInt(8) == 0 ? 70_000L + random.nextInt(5000) : 20L + random.nextInt(400);
                        String error = random.nextInt(12) == 0 ? "HTTP 400: refused" : null;
                        // Vignettes are right or wrong the same in most epochs: clustered figures.
                        boolean right = (v.id().hashCode() + (random.nextInt(4) == 0 ? 1 : 0)) % 2 == 0;
                        records.add(new ResponseRecord(v.id(), error != null ? "" : right ? "x" : "y", model,
                                "stop", latency, new Usage(10 + random.nextInt(5), 1), error));
                    }
                    store.record(job, new JobOutcome(job.id(), records), "w" + random.nextInt(2));
                }
            }
        }
        store.newScoring(runId, partial ? "partial" : "exact", Scoring.RUN, r -> r.context().expected() == null ? null
                : new ScoreEntry(partial ? "partial" : "exact", r.record().response().equals("x") ? 1.0
                : partial ? 0.25 * (1 + Math.abs(r.record().vignetteId().hashCode()) % 3) : 0.0, null));
    }
}
