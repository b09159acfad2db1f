package dev.panoptes.control.store;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link JdbcResultStore} on a real PostgreSQL server ({@link TestPostgres}): the store's contract,
 * the migrations from every older schema version, each sitting's unstored spend, versioned scorings, concurrent writers and stores, rollback after an error, and credentials
 * that never show.
 */
class PostgresResultStoreTest {
    private final TestPostgres.Database db = TestPostgres.freshDatabase();

    private static Job job(String id, String runId, int epoch, String model, Vignette... vignettes) {
        return new Job(JobId.of(id), new EvalSpec("s", List.of(vignettes), SpecParams.NONE.withModel(model)),
                runId, epoch);
    }

    private static JobOutcome answers(Job job, String... responses) {
        List<ResponseRecord> records = new ArrayList<>();
        for (int i = 0; i < responses.length; i++) {
            records.add(new ResponseRecord(job.spec().vignettes().get(i).id(), responses[i]));
        }
        return new JobOutcome(job.id(), records);
    }

    private static List<StoredRecord> records(JdbcResultStore store, String runId) {
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(runId, records::add);
        return records;
    }

    private static List<JobFailure> failures(JdbcResultStore store) {
        List<JobFailure> failures = new ArrayList<>();
        store.forEachFailure(failures::add);
        return failures;
    }

    @Test
    void recordsAreStoredOnceDuplicatesCountedAndAFailureIsReplacedThenClearedByAnAnswer() {
        Job job = TestJobs.job("j", "a", "b");
        Job other = TestJobs.job("k", "c", "d");
        try (JdbcResultStore store = db.open()) {
            store.recordFailure(job.id(), "model API answered 500", 1);
            store.recordFailure(job.id(), "model API answered 503", 2);
            assertThat(failures(store)).singleElement().satisfies(f -> {
                assertThat(f.reason()).isEqualTo("model API answered 503");
                assertThat(f.attempts()).isEqualTo(2);
            });

            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
            assertThat(store.record(new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "changed"))), "w2"))
                    .isEqualTo(new ResultStore.Receipt(0, 1));
            store.record(new JobOutcome(other.id(), List.of(new ResponseRecord("v0", "half"))), "w1");

            assertThat(failures(store)).isEmpty();
            assertThat(store.recordCount()).isEqualTo(3);
            assertThat(store.duplicateCount()).isEqualTo(1);
            assertThat(store.storedVignetteIds(job.id())).containsExactlyInAnyOrder("v0", "v1");
            assertThat(store.completedAmong(List.of(job, other))).containsExactly(job.id());
            assertThat(records(store, null)).filteredOn(r -> r.jobId().equals(job.id()))
                    .extracting(r -> r.record().response(), StoredRecord::workerId)
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("re: a", "w1"),
                            org.assertj.core.groups.Tuple.tuple("re: b", "w1"));
        }
    }

    @Test
    void everyColumnComesBackAsItWentInWithItsContextAndScore() {
        Job job = job("r1-m-e2-0000", "r1", 2, "meta-llama/Llama-3.1-8B",
                new Vignette("capital", "Capital of France?", "Paris", Map.of("topic", "geo")),
                new Vignette("open", null, "", Map.of(), List.of(ChatMessage.user("Tell a story")), null));
        ResponseRecord full = new ResponseRecord("capital", "The Paris.", "llama-3.1-8b", "stop", 1234567890123L,
                new Usage(7, 3_000_000_000L));
        ResponseRecord bare = new ResponseRecord("open", "Once");
        try (JdbcResultStore store = db.open().withScoring(new RunScoring("normalized"))) {
            store.record(job, new JobOutcome(job.id(), List.of(full, bare)), "w9");

            List<StoredRecord> records = records(store, "r1");
            assertThat(records).extracting(StoredRecord::record).containsExactlyInAnyOrder(full, bare);
            StoredRecord capital = records.stream().filter(r -> r.record().vignetteId().equals("capital"))
                    .findFirst().orElseThrow();
            assertThat(capital.context()).isEqualTo(new RecordContext("r1", "meta-llama/Llama-3.1-8B", 2,
                    "Capital of France?", "Paris", "{\"topic\":\"geo\"}"));
            assertThat(capital.score()).isEqualTo(new ScoreEntry("normalized", 1.0, null));
            assertThat(capital.storedAt()).isAfter(Instant.EPOCH);
            assertThat(records).filteredOn(r -> r.record().vignetteId().equals("open")).singleElement()
                    .satisfies(r -> assertThat(r.score()).isNull());
        }
    }

    @Test
    void theFirstGradeStandsAndRescoringAddsAScoringOfOneRunInABatch() {
        Job judged = job("r1-0000", "r1", 0, "m", new Vignette("judged", null, "Paris", Map.of(),
                List.of(ChatMessage.user("Capital of France?")), "judge:gpt-4o"), new Vignette("b", "y", "no", Map.of()));
        Job second = job("r2-0000", "r2", 0, null, new Vignette("a", "x", "yes", Map.of()));
        try (JdbcResultStore store = db.open().withScoring(new RunScoring("exact"))) {
            store.record(judged, answers(judged, "Paris, of course", "yes"), "w1");
            store.record(second, answers(second, "yes"), "w1");

            assertThat(store.recordGrade(judged.id(), "judged", new ScoreEntry("judge:gpt-4o", 1.0, "names Paris")))
                    .isTrue();
            assertThat(store.recordGrade(judged.id(), "judged", new ScoreEntry("judge:gpt-4o", 0.0, "again")))
                    .isFalse();
            assertThat(store.recordGrade(judged.id(), "missing", new ScoreEntry("judge:gpt-4o", 1.0, null))).isFalse();

            assertThat(store.rescore("r1", "includes", r -> r.record().vignetteId().equals("b")
                    ? new ScoreEntry("includes", 0.5, "rescored") : null).number()).isEqualTo(2);
            assertThat(records(store, "r1")).extracting(StoredRecord::score)
                    .containsExactlyInAnyOrder(new ScoreEntry("includes", 0.5, "rescored"), null);
            assertThat(records(store, "r2")).extracting(StoredRecord::score)
                    .containsExactly(new ScoreEntry("exact", 1.0, null));
        }
    }

    @Test
    void runsAreReplacedWhenStartedAgainAndWorkerEventsAddUp() {
        RunEntry first = new RunEntry("r1", "suite.jsonl", List.of("gpt-4o", "llama"), "normalized", 2, 10,
                Instant.ofEpochMilli(1_000));
        RunEntry second = new RunEntry("r2", "other.csv", List.of(), "exact", 1, 3, Instant.ofEpochMilli(2_000));
        RunEntry firstAgain = new RunEntry("r1", "suite.jsonl", List.of("gpt-4o"), "exact", 3, 11,
                Instant.ofEpochMilli(3_000));
        try (JdbcResultStore store = db.open()) {
            store.recordRun(first);
            store.recordRun(second);
            store.recordRun(firstAgain);
            store.addWorkerEvents("r1", "w1", 2, 1);
            store.addWorkerEvents("r1", "w1", 3, 0);
            store.addWorkerEvents("r1", "w2", 1, 0);
        }
        try (JdbcResultStore store = db.open()) {
            assertThat(JdbcResultStoreV2Test.withoutSittings(store.runs())).containsExactly(second,
                    JdbcResultStoreV2Test.keptFirstStart(firstAgain, first));
            assertThat(store.runs().get(1).sittings()).hasSize(2);
            assertThat(store.workerEvents("r1")).containsExactly(new WorkerEventCount("w1", 5, 1),
                    new WorkerEventCount("w2", 1, 0));
            assertThat(store.workerEvents("r2")).isEmpty();
            // What stopped a sitting is kept with it: the last one here, not the first.
            RunStop budget = new RunStop(RunStop.BUDGET, "the cost budget (--max-cost) stopped the run");
            store.stopRun("r1", budget);
            assertThat(store.runs().get(1).sittings()).extracting(RunSitting::stop).containsExactly(null, budget);
            assertThat(store.deleteRun("r1").noted()).isTrue();
            store.recordRun(first);
            assertThat(store.runs().get(1).sittings()).extracting(RunSitting::stop)
                    .containsExactly((RunStop) null);
        }
    }

    @Test
    void aVersion1DatabaseIsUpgradedInOneTransactionKeepingItsRecords() throws Exception {
        String run = "0123456789abcdef";
        db.execute("CREATE TABLE panoptes_schema (version INTEGER NOT NULL)",
                "INSERT INTO panoptes_schema (version) VALUES (1)",
                "CREATE TABLE panoptes_records (job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                        + "response TEXT NOT NULL, model TEXT, finish_reason TEXT, latency_ms BIGINT, "
                        + "prompt_tokens BIGINT, completion_tokens BIGINT, worker_id TEXT NOT NULL, "
                        + "stored_at BIGINT NOT NULL, PRIMARY KEY (job_id, vignette_id))",
                "CREATE TABLE panoptes_failures (job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, "
                        + "attempts INTEGER NOT NULL, failed_at BIGINT NOT NULL)",
                "INSERT INTO panoptes_records VALUES ('" + run + "-0003', 'v0', 'hello', 'llama', 'stop', 120, 5, 2, "
                        + "'w1', 1000)",
                "INSERT INTO panoptes_failures VALUES ('" + run + "-0004', 'model API answered 400', 3, 2000)");

        try (JdbcResultStore store = db.open()) {
            assertThat(records(store, run)).singleElement().satisfies(r -> {
                assertThat(r.record().response()).isEqualTo("hello");
                assertThat(r.record().latencyMs()).isEqualTo(120L);
                assertThat(r.context()).isEqualTo(new RecordContext(run, null, 0, null, null, null));
            });
            assertThat(failures(store)).singleElement().satisfies(f -> assertThat(f.runId()).isEqualTo(run));
            Job next = job(run + "-0005", run, 0, null, new Vignette("v0", "hi", "hello", Map.of()));
            assertThat(store.record(next, answers(next, "hello"), "w2")).isEqualTo(new ResultStore.Receipt(1, 0));
        }
        db.open().close();
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void aVersion3DatabaseIsUpgradedItsRecordsKeptWithoutRequestKeys() throws Exception {
        JdbcResultStoreV4Test.checkUpgradeFromVersion3(db::execute, db::open);
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void aVersion4DatabaseIsUpgradedItsRecordsKeptWithoutTranscripts() throws Exception {
        JdbcResultStoreV5Test.checkUpgradeFromVersion4(db::execute, db::open);
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void aTranscriptIsStoredOnceWithItsAnswerHoweverOftenTheSampleIsDelivered() {
        JdbcResultStoreV5Test.checkTranscriptStoredOnce(db::open);
    }

    @Test
    void aVersion5DatabaseIsUpgradedItsRunsAndAnswersKept() throws Exception {
        JdbcResultStoreV6Test.checkUpgradeFromVersion5(db::execute, db::open);
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    private long number(String query) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Version 7 keeps PostgreSQL's index on the request key, and none of SQLite's key tables. */
    private void assertIndexedNotKeyed() throws Exception {
        assertThat(number("SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'panoptes_records_request_key'"))
                .isEqualTo(1);
        assertThat(number("SELECT COUNT(*) FROM information_schema.tables WHERE table_name IN "
                + "('panoptes_request_keys', 'panoptes_request_key_mark')")).isZero();
    }

    @Test
    void theAnswersOfASittingThatNeverEndedAreFoundThroughTheIndex() throws Exception {
        JdbcResultStoreV7Test.checkUnendedSittingsAnswersFound(db::open, this::assertIndexedNotKeyed);
    }

    @Test
    void afterDeletingTheLastRunANewRunsAnswersAreFound() throws Exception {
        JdbcResultStoreV7Test.checkNewAnswersFoundAfterDeletingTheLastRun(db::open, this::assertIndexedNotKeyed);
    }

    @Test
    void aRecordReplacedBehindTheStoresBackIsFoundByItsNewKeyOnly() throws Exception {
        JdbcResultStoreV7Test.checkAStaleKeyEntryYieldsNothing(db::execute, db::open, () -> { });
    }

    @Test
    void aVersion6DatabaseIsUpgradedItsIndexKept() throws Exception {
        JdbcResultStoreV7Test.checkUpgradeFromVersion6(db::execute, db::open, () -> {
            assertThat(schemaVersions()).containsExactly(7);
            assertIndexedNotKeyed();
        });
    }

    @Test
    void eachSittingKeepsItsUnstoredSpendAndTheRunAddsThemUp() {
        JdbcResultStoreV6Test.checkUnstoredSpendPerSittingAndInAll(db::open);
    }

    @Test
    void deletingARunRemovesItsUnstoredSpendAndNoOthers() {
        JdbcResultStoreV6Test.checkDeletionRemovesTheUnstoredSpend(db::open);
    }

    @Test
    void aVersion2DatabaseIsUpgradedKeepingRecordsRunsAndFailuresItsScoresBecomingScoring1() throws Exception {
        ScoringsContract.writeVersion2(db::execute);
        ScoringsContract.checkUpgradedVersion2(db::open);
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void rescoreAddsScoring2AndLeavesScoring1Intact() {
        ScoringsContract.checkRescoreAddsAScoringAndKeepsTheFirst(db::open);
    }

    @Test
    void failedAnswersGetZeroInEveryScoringAndAreNeverScored() {
        ScoringsContract.checkFailedAnswersGetZeroInEveryScoringAndAreNeverScored(db::open);
    }

    @Test
    void aRunsManifestAndEndAreKept() {
        ScoringsContract.checkManifestsAndEndsAreKept(db::open);
    }

    @Test
    void aDatabaseFromANewerSchemaIsRefused() throws Exception {
        db.open().close();
        db.execute("INSERT INTO panoptes_schema (version) VALUES (99)");
        assertThatThrownBy(db::open).isInstanceOf(StoreException.class)
                .hasMessageContaining("schema version 99").hasMessageContaining(db.name());
    }

    @Test
    void storesStartingTogetherOnAnEmptyDatabaseCreateTheSchemaOnce() throws Exception {
        int stores = 6;
        ExecutorService pool = Executors.newFixedThreadPool(stores);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<JdbcResultStore>> opened = new ArrayList<>();
        try {
            for (int i = 0; i < stores; i++) {
                opened.add(pool.submit(() -> {
                    start.await();
                    return db.open();
                }));
            }
            start.countDown();
            for (Future<JdbcResultStore> f : opened) {
                f.get(30, TimeUnit.SECONDS).close();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(schemaVersions()).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void manyWritersRecordingTheSameOutcomesAtOnceStoreEachRecordOnceAndCountTheRestAsDuplicates()
            throws Exception {
        List<Job> jobs = TestJobs.jobs("j", 60);
        int writers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<JdbcResultStore> stores = new ArrayList<>();
        try {
            for (int w = 0; w < writers; w++) {
                stores.add(db.open());
            }
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                JdbcResultStore store = stores.get(w);
                String id = "w" + w;
                // Each writer in its own order, and each outcome's records reversed for half of them:
                // the store must still lock rows in one order and never deadlock.
                List<Job> order = new ArrayList<>(jobs);
                Collections.shuffle(order, new Random(w));
                boolean reversed = w % 2 == 1;
                results.add(pool.submit(() -> {
                    start.await();
                    int stored = 0;
                    for (Job job : order) {
                        List<ResponseRecord> records = new ArrayList<>(TestJobs.echo(job).records());
                        if (reversed) {
                            Collections.reverse(records);
                        }
                        stored += store.record(new JobOutcome(job.id(), records), id).stored();
                    }
                    return stored;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            long records = jobs.stream().mapToLong(Job::size).sum();
            assertThat(total).isEqualTo(records);
            assertThat(stores.get(0).recordCount()).isEqualTo(records);
            assertThat(stores.stream().mapToLong(JdbcResultStore::duplicateCount).sum())
                    .isEqualTo((writers - 1) * records);
            assertThat(stores.get(0).completedAmong(jobs)).hasSize(jobs.size());
        } finally {
            pool.shutdownNow();
            stores.forEach(JdbcResultStore::close);
        }
    }

    @Test
    void aFailedStatementIsRolledBackAndTheStoreGoesOn() {
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = db.open()) {
            // NOT NULL violated: PostgreSQL aborts the transaction; the store must roll it back.
            assertThatThrownBy(() -> store.recordFailure(job.id(), null, 1)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("cannot record the failure of job " + job.id());

            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(store.recordCount()).isEqualTo(1);
        }
    }

    @Test
    void aTextThePostgresCannotHoldIsRefusedForItsDataNotTakenForAnOutage() {
        Job nul = TestJobs.job("nul", "a");
        Job ok = TestJobs.job("ok", "a");
        try (JdbcResultStore store = db.open()) {
            assertThatThrownBy(() -> store.record(new JobOutcome(nul.id(),
                    List.of(new ResponseRecord("v0", "an answer with a \u0000 in it"))), "w1"))
                    .isInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("cannot store the outcome of job nul from worker w1");

            assertThat(store.record(TestJobs.echo(ok), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));
        }
    }

    @Test
    void aBatchRefusesItsNulAnswerAloneStoresItsNeighboursAndCountsACopyDuplicate() {
        Job before = TestJobs.job("before", "a", "b");
        Job nul = TestJobs.job("nul", "a");
        Job after = TestJobs.job("after", "a");
        try (JdbcResultStore store = db.open()) {
            List<ResultStore.Written> done = new java.util.ArrayList<>();
            store.recordAll(List.of(new ResultStore.Answer(before, TestJobs.echo(before), "w1"),
                    new ResultStore.Answer(nul, new JobOutcome(nul.id(),
                            List.of(new ResponseRecord("v0", "an answer with a \u0000 in it"))), "w1"),
                    new ResultStore.Answer(after, TestJobs.echo(after), "w1"),
                    new ResultStore.Answer(before, TestJobs.echo(before), "w2")), done);

            assertThat(done).hasSize(4);
            assertThat(done.get(0).receipt()).isEqualTo(new ResultStore.Receipt(2, 0));
            assertThat(done.get(1).refused()).hasMessageContaining("cannot store the outcome of job nul from worker w1");
            assertThat(done.get(2).receipt()).isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(done.get(3).receipt()).isEqualTo(new ResultStore.Receipt(0, 2));
            assertThat(store.recordCount()).isEqualTo(3);

            done.clear();
            store.recordAll(List.of(new ResultStore.Answer(nul, TestJobs.echo(nul), "w1"),
                    new ResultStore.Answer(after, TestJobs.echo(after), "w1")), done);
            assertThat(done).extracting(ResultStore.Written::receipt)
                    .containsExactly(new ResultStore.Receipt(1, 0), new ResultStore.Receipt(0, 1));
        }
    }

    @Test
    void aTerminatedBackendIsReplacedAndTheRepeatedWriteGoesThrough() throws Exception {
        Job first = TestJobs.job("j1", "a");
        Job second = TestJobs.job("j2", "a", "b");
        try (JdbcResultStore store = db.open()) {
            store.record(TestJobs.echo(first), "w1");
            assertThat(db.terminateStores()).isEqualTo(1);

            assertThatThrownBy(() -> store.record(TestJobs.echo(second), "w1")).isInstanceOf(StoreException.class)
                    .isNotInstanceOf(RecordRejectedException.class);
            assertThat(store.record(TestJobs.echo(second), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
            assertThat(store.recordCount()).isEqualTo(3);
            assertThat(store.duplicateCount()).isZero();
        }
    }

    @Test
    void thePasswordIsNeverPrintedNotInToStringNorInAnyError() {
        String wrong = "not-the-password-4f1c";
        assertThatThrownBy(() -> JdbcResultStore.openPostgres(db.url(), db.user(), wrong))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("cannot open result database " + db.url())
                .hasMessageContaining("password")
                .hasMessageNotContaining(wrong);
        assertThatThrownBy(() -> JdbcResultStore.openPostgres(db.url() + "?password=" + wrong, db.user(), null))
                .isInstanceOf(StoreException.class).hasMessageContaining("password=***")
                .hasMessageNotContaining(wrong);
        try (JdbcResultStore store = db.open()) {
            assertThat(store.toString()).contains(db.name()).doesNotContain(db.password());
            assertThatThrownBy(() -> store.recordFailure(JobId.of("j"), null, 1))
                    .hasMessageNotContaining(db.password());
        }
    }

    private List<Integer> schemaVersions() throws Exception {
        List<Integer> versions = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version FROM panoptes_schema")) {
            while (rs.next()) {
                versions.add(rs.getInt(1));
            }
        }
        return versions;
    }
}
