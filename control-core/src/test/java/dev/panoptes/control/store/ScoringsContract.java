package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.suite.RunManifest;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What versioned scorings, failed answers, run manifests and the version 2 to 3 migration
 * promise, checked on any {@link JdbcResultStore}: the SQLite and the PostgreSQL test classes run
 * the same checks.
 */
final class ScoringsContract {
    /** Run r1 of the version 2 fixture, noted with scorer exact at 500 ms. */
    static final String V2_RUN = "r1";

    private ScoringsContract() {
    }

    /** Runs SQL on the database under test, outside any store. */
    @FunctionalInterface
    interface Sql {
        void execute(String... statements) throws Exception;
    }

    static Job job(String id, String runId, Vignette... vignettes) {
        return new Job(JobId.of(id), new EvalSpec("s", List.of(vignettes), SpecParams.NONE.withModel("m")), runId, 0);
    }

    static List<StoredRecord> records(JdbcResultStore store, String runId, int scoring) {
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(runId, scoring, records::add);
        return records;
    }

    static ScoreEntry scoreOf(JdbcResultStore store, String runId, int scoring, String vignetteId) {
        return records(store, runId, scoring).stream().filter(r -> r.record().vignetteId().equals(vignetteId))
                .findFirst().orElseThrow().score();
    }

    /** A version 2 database as that version created it: two runs' scored records (one noted), a failure. */
    static void writeVersion2(Sql sql) throws Exception {
        sql.execute("CREATE TABLE panoptes_schema (version INTEGER NOT NULL)",
                "INSERT INTO panoptes_schema (version) VALUES (2)",
                "CREATE TABLE panoptes_records (job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                        + "response TEXT NOT NULL, model TEXT, finish_reason TEXT, latency_ms BIGINT, "
                        + "prompt_tokens BIGINT, completion_tokens BIGINT, worker_id TEXT NOT NULL, "
                        + "stored_at BIGINT NOT NULL, run_id TEXT, run_model TEXT, epoch INTEGER, prompt TEXT, "
                        + "expected TEXT, metadata TEXT, scorer TEXT, score DOUBLE PRECISION, explanation TEXT, "
                        + "PRIMARY KEY (job_id, vignette_id))",
                "CREATE TABLE panoptes_failures (job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, "
                        + "attempts INTEGER NOT NULL, failed_at BIGINT NOT NULL, run_id TEXT, run_model TEXT)",
                "CREATE TABLE panoptes_runs (run_id VARCHAR(64) NOT NULL PRIMARY KEY, suite TEXT NOT NULL, "
                        + "models TEXT NOT NULL, scorer TEXT NOT NULL, epochs INTEGER NOT NULL, "
                        + "vignettes INTEGER NOT NULL, started_at BIGINT NOT NULL)",
                "CREATE TABLE panoptes_worker_events (run_id VARCHAR(64) NOT NULL, worker_id VARCHAR(256) NOT NULL, "
                        + "failures BIGINT NOT NULL, quarantines BIGINT NOT NULL, PRIMARY KEY (run_id, worker_id))",
                "INSERT INTO panoptes_runs VALUES ('r1', 'math.jsonl', '[\"m\"]', 'exact', 1, 3, 500)",
                "INSERT INTO panoptes_records VALUES ('r1-m-e0-0000', 'a', '4', 'm', 'stop', 10, 1, 1, 'w1', 1000, "
                        + "'r1', 'm', 0, '2+2?', '4', NULL, 'exact', 1.0, NULL)",
                "INSERT INTO panoptes_records VALUES ('r1-m-e0-0000', 'b', '5', 'm', 'stop', 10, 1, 1, 'w1', 1000, "
                        + "'r1', 'm', 0, '2+3?', '6', NULL, 'exact', 0.0, 'expected 6')",
                "INSERT INTO panoptes_records VALUES ('r1-m-e0-0000', 'c', 'hi', 'm', 'stop', 10, 1, 1, 'w1', 1000, "
                        + "'r1', 'm', 0, 'Say hi', NULL, NULL, NULL, NULL, NULL)",
                "INSERT INTO panoptes_records VALUES ('r2-0000', 'x', '7', NULL, NULL, NULL, NULL, NULL, 'w2', 3000, "
                        + "'r2', NULL, 0, 'x?', '7', NULL, 'numeric', 1.0, 'read 7')",
                "INSERT INTO panoptes_records VALUES ('r2-0000', 'y', 'no', NULL, NULL, NULL, NULL, NULL, 'w2', 2000, "
                        + "'r2', NULL, 0, 'y?', 'yes', NULL, 'includes', 0.0, NULL)",
                "INSERT INTO panoptes_failures VALUES ('r1-m-e0-0001', 'model API answered 500', 3, 4000, 'r1', 'm')");
    }

    /** The version 2 fixture reads back whole at version 3, its scores as scoring 1 of each run. */
    static void checkUpgradedVersion2(Supplier<JdbcResultStore> open) {
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).isEqualTo(5);
            assertThat(store.runs()).singleElement().satisfies(run -> {
                assertThat(run.runId()).isEqualTo(V2_RUN);
                assertThat(run.legacy()).isTrue();
                assertThat(run.manifest()).isNull();
                assertThat(run.finishedAt()).isNull();
                assertThat(run.models()).containsExactly("m");
                assertThat(run.startedAt()).isEqualTo(Instant.ofEpochMilli(500));
            });
            assertThat(store.scorings("r1")).containsExactly(
                    new Scoring(1, "exact", Instant.ofEpochMilli(500), Scoring.RUN));
            // r2 was never noted and its records name two scorers: the first of them, from its first record's time.
            assertThat(store.scorings("r2")).containsExactly(
                    new Scoring(1, "includes", Instant.ofEpochMilli(2000), Scoring.RUN));
            assertThat(scoreOf(store, "r1", 1, "a")).isEqualTo(new ScoreEntry("exact", 1.0, null));
            assertThat(scoreOf(store, "r1", 0, "b")).isEqualTo(new ScoreEntry("exact", 0.0, "expected 6"));
            assertThat(scoreOf(store, "r1", 1, "c")).isNull();
            assertThat(scoreOf(store, "r2", 1, "x")).isEqualTo(new ScoreEntry("numeric", 1.0, "read 7"));
            assertThat(records(store, "r1", 1)).allSatisfy(r -> {
                assertThat(r.record().isFailed()).isFalse();
                assertThat(r.context().model()).isEqualTo("m");
            });
            List<JobFailure> failures = new ArrayList<>();
            store.forEachFailure(failures::add);
            assertThat(failures).extracting(JobFailure::reason).containsExactly("model API answered 500");

            Scoring second = store.rescore("r1", "includes", r -> new ScoreEntry("includes", 0.5, "again"));
            assertThat(second.number()).isEqualTo(2);
            assertThat(scoreOf(store, "r1", 1, "a")).as("scoring 1 stays").isEqualTo(new ScoreEntry("exact", 1.0, null));
            assertThat(scoreOf(store, "r1", 0, "a")).isEqualTo(new ScoreEntry("includes", 0.5, "again"));
        }
        // Opened again: upgraded once, nothing lost.
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).isEqualTo(5);
            assertThat(store.scorings("r1")).extracting(Scoring::number).containsExactly(1, 2);
        }
    }

    /**
     * Stored answers are scored into the run's first scoring; rescore makes scoring 2, which the
     * readers show by default, and leaves scoring 1 as it was; the scorings are listed in order.
     */
    static void checkRescoreAddsAScoringAndKeepsTheFirst(Supplier<JdbcResultStore> open) {
        Job first = job("r1-m-e0-0000", "r1", new Vignette("a", "2+2?", "4", Map.of()),
                new Vignette("b", "2+3?", "5", Map.of()), new Vignette("open", "Say hi", null, Map.of()));
        Job other = job("r2-m-e0-0000", "r2", new Vignette("a", "2+2?", "4", Map.of()));
        try (JdbcResultStore store = open.get().withScoring(new RunScoring("exact"))) {
            store.record(first, new JobOutcome(first.id(), List.of(new ResponseRecord("a", "4"),
                    new ResponseRecord("b", "5.0"), new ResponseRecord("open", "hi"))), "w1");
            store.record(other, new JobOutcome(other.id(), List.of(new ResponseRecord("a", "4"))), "w1");
            assertThat(store.scorings("r1")).singleElement().satisfies(s -> {
                assertThat(s.number()).isEqualTo(1);
                assertThat(s.scorer()).isEqualTo("exact");
                assertThat(s.origin()).isEqualTo(Scoring.RUN);
            });
            assertThat(scoreOf(store, "r1", 0, "b").score()).isEqualTo(0.0);

            RunScoring numeric = new RunScoring("numeric");
            Scoring second = store.rescore("r1", "numeric",
                    r -> numeric.score("numeric", r.context().expected(), r.record().response()));

            assertThat(second.number()).isEqualTo(2);
            assertThat(second.origin()).isEqualTo(Scoring.RESCORE);
            assertThat(store.scorings("r1")).extracting(Scoring::number, Scoring::scorer, Scoring::origin)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "exact", Scoring.RUN),
                            org.assertj.core.groups.Tuple.tuple(2, "numeric", Scoring.RESCORE));
            assertThat(scoreOf(store, "r1", 1, "b")).as("scoring 1 is never changed")
                    .isEqualTo(new ScoreEntry("exact", 0.0, scoreOf(store, "r1", 1, "b").explanation()));
            assertThat(scoreOf(store, "r1", 2, "b").scorer()).isEqualTo("numeric");
            assertThat(scoreOf(store, "r1", 2, "b").score()).isEqualTo(1.0);
            assertThat(scoreOf(store, "r1", 0, "b").score()).as("the latest by default").isEqualTo(1.0);
            assertThat(scoreOf(store, "r1", 2, "open")).as("no expected answer: unscored").isNull();
            assertThat(store.scorings("r2")).as("another run's scorings are its own").hasSize(1);
            assertThat(scoreOf(store, "r2", 0, "a").scorer()).isEqualTo("exact");
            assertThat(scoreOf(store, "r1", 7, "a")).as("no such scoring: unscored").isNull();

            // Answers stored from now on go into the latest scoring, and a grade into the one named.
            Job more = job("r1-m-e0-0001", "r1", new Vignette("j", "Capital?", "Paris", Map.of(), List.of(),
                    "judge:gpt-4o"));
            store.record(more, new JobOutcome(more.id(), List.of(new ResponseRecord("j", "Paris"))), "w1");
            assertThat(scoreOf(store, "r1", 2, "j")).isEqualTo(new ScoreEntry("judge:gpt-4o", null, null));
            assertThat(scoreOf(store, "r1", 1, "j")).isNull();
            assertThat(store.recordGrade(more.id(), "j", 1, new ScoreEntry("judge:gpt-4o", 1.0, "yes")))
                    .as("not waiting in scoring 1").isFalse();
            assertThat(store.recordGrade(more.id(), "j", 2, new ScoreEntry("judge:gpt-4o", 1.0, "yes"))).isTrue();
            assertThat(scoreOf(store, "r1", 2, "j")).isEqualTo(new ScoreEntry("judge:gpt-4o", 1.0, "yes"));
        }
    }

    /**
     * A failed answer is never given to a scorer: the store's scoring at store time and every new
     * scoring give it 0 with "failed answer: <error>"; its neighbours are scored as usual.
     */
    static void checkFailedAnswersGetZeroInEveryScoringAndAreNeverScored(Supplier<JdbcResultStore> open) {
        Job job = job("r1-m-e0-0000", "r1", new Vignette("ok", "2+2?", "4", Map.of()),
                new Vignette("long", "a very long prompt", "4", Map.of()),
                new Vignette("judged", "Capital?", "Paris", Map.of(), List.of(), "judge:gpt-4o"));
        AtomicInteger scoredAtStore = new AtomicInteger();
        RunScoring exact = new RunScoring("exact");
        RecordScoring counting = new RecordScoring() {
            @Override
            public ScoreEntry score(Vignette vignette, ResponseRecord record) {
                assertThat(record.isFailed()).as("a failed answer reached the scorer").isFalse();
                scoredAtStore.incrementAndGet();
                return exact.score(vignette, record);
            }

            @Override
            public String spec() {
                return "exact";
            }
        };
        String error = "model API answered 400: context_length_exceeded";
        try (JdbcResultStore store = open.get().withScoring(counting)) {
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("ok", "4"),
                    ResponseRecord.failed("long", "m", 5L, error),
                    ResponseRecord.failed("judged", "m", 5L, error))), "w1");
            assertThat(scoredAtStore.get()).isEqualTo(1);
            assertThat(scoreOf(store, "r1", 1, "ok")).isEqualTo(new ScoreEntry("exact", 1.0, null));
            assertThat(scoreOf(store, "r1", 1, "long")).isEqualTo(new ScoreEntry("exact", 0.0,
                    FailedAnswers.EXPLANATION_PREFIX + error));
            assertThat(scoreOf(store, "r1", 1, "judged")).as("not left waiting for the judge")
                    .isEqualTo(new ScoreEntry("judge:gpt-4o", 0.0, "failed answer: " + error));
            StoredRecord failed = records(store, "r1", 1).stream()
                    .filter(r -> r.record().vignetteId().equals("long")).findFirst().orElseThrow();
            assertThat(failed.record().error()).isEqualTo(error);
            assertThat(failed.record().isFailed()).isTrue();

            List<String> rescored = new ArrayList<>();
            Scoring second = store.rescore("r1", "includes", r -> {
                rescored.add(r.record().vignetteId());
                return new ScoreEntry("includes", 1.0, null);
            });
            assertThat(rescored).containsExactly("ok");
            assertThat(scoreOf(store, "r1", second.number(), "long")).isEqualTo(new ScoreEntry("includes", 0.0,
                    "failed answer: " + error));
            assertThat(scoreOf(store, "r1", second.number(), "ok")).isEqualTo(new ScoreEntry("includes", 1.0, null));
        }
    }

    /** A run's manifest comes back whole; its end is noted; a run started again is not finished. */
    static void checkManifestsAndEndsAreKept(Supplier<JdbcResultStore> open) {
        RunManifest manifest = new RunManifest(RunManifest.FORMAT, "1.2.3", "evals/math.jsonl", "ab".repeat(32), 40,
                List.of("stub-b", "stub-a"), "Answer with a number.", 0.7, 256, 42L, 2, "shots.jsonl",
                "cd".repeat(32), 8, "nightly");
        try (JdbcResultStore store = open.get()) {
            store.recordRun(RunEntry.of(manifest, "numeric", Instant.ofEpochMilli(1_000)));
            store.finishRun(manifest.runId());
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(store.runs()).singleElement().satisfies(run -> {
                assertThat(run.runId()).isEqualTo(manifest.runId());
                assertThat(run.manifest()).isEqualTo(manifest);
                assertThat(run.legacy()).isFalse();
                assertThat(run.suite()).isEqualTo("evals/math.jsonl");
                assertThat(run.models()).containsExactly("stub-b", "stub-a");
                assertThat(run.scorer()).isEqualTo("numeric");
                assertThat(run.finishedAt()).isAfterOrEqualTo(Instant.ofEpochMilli(1_000));
            });
            store.recordRun(RunEntry.of(manifest, "exact", Instant.ofEpochMilli(2_000)));
            assertThat(store.runs()).singleElement().satisfies(run -> {
                assertThat(run.finishedAt()).isNull();
                assertThat(run.scorer()).isEqualTo("exact");
            });
        }
    }
}
