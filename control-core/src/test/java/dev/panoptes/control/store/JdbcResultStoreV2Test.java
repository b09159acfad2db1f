package dev.panoptes.control.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class JdbcResultStoreV2Test {
    private static final String RUN = "0123456789abcdef";

    @TempDir
    Path dir;

    private static void execute(Path db, String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
             Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }

    private static List<Integer> schemaVersions(Path db) throws Exception {
        List<Integer> versions = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version FROM panoptes_schema")) {
            while (rs.next()) {
                versions.add(rs.getInt(1));
            }
        }
        return versions;
    }

    private static List<StoredRecord> records(JdbcResultStore store, String runId) {
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(runId, records::add);
        return records;
    }

    private static StoredRecord record(JdbcResultStore store, String vignetteId) {
        return records(store, null).stream().filter(r -> r.record().vignetteId().equals(vignetteId)).findFirst()
                .orElseThrow();
    }

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

    @Test
    void aVersion1DatabaseIsUpgradedKeepingItsRecordsWithTheRunTakenFromTheJobId() throws Exception {
        Path db = dir.resolve("v1.db");
        execute(db,
                "CREATE TABLE panoptes_schema (version INTEGER NOT NULL)",
                "INSERT INTO panoptes_schema (version) VALUES (1)",
                "CREATE TABLE panoptes_records (job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                        + "response TEXT NOT NULL, model TEXT, finish_reason TEXT, latency_ms BIGINT, "
                        + "prompt_tokens BIGINT, completion_tokens BIGINT, worker_id TEXT NOT NULL, "
                        + "stored_at BIGINT NOT NULL, PRIMARY KEY (job_id, vignette_id))",
                "CREATE TABLE panoptes_failures (job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, "
                        + "attempts INTEGER NOT NULL, failed_at BIGINT NOT NULL)",
                "INSERT INTO panoptes_records VALUES ('" + RUN + "-0003', 'v0', 'hello', 'llama', 'stop', 120, 5, 2, "
                        + "'w1', 1000)",
                "INSERT INTO panoptes_failures VALUES ('" + RUN + "-0004', 'model API answered 400', 3, 2000)");

        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(records(store, RUN)).singleElement().satisfies(r -> {
                assertThat(r.jobId()).isEqualTo(JobId.of(RUN + "-0003"));
                assertThat(r.record().response()).isEqualTo("hello");
                assertThat(r.record().model()).isEqualTo("llama");
                assertThat(r.record().latencyMs()).isEqualTo(120L);
                assertThat(r.workerId()).isEqualTo("w1");
                assertThat(r.storedAt()).isEqualTo(Instant.ofEpochMilli(1000));
                assertThat(r.context()).isEqualTo(new RecordContext(RUN, null, 0, null, null, null));
                assertThat(r.score()).isNull();
            });
            List<JobFailure> failures = new ArrayList<>();
            store.forEachFailure(failures::add);
            assertThat(failures).singleElement().satisfies(f -> {
                assertThat(f.jobId()).isEqualTo(JobId.of(RUN + "-0004"));
                assertThat(f.runId()).isEqualTo(RUN);
                assertThat(f.model()).isNull();
                assertThat(f.attempts()).isEqualTo(3);
            });

            Job next = job(RUN + "-0005", RUN, 0, null, new Vignette("v0", "hi", "hello", Map.of()));
            assertThat(store.record(next, answers(next, "hello"), "w2")).isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(store.recordCount()).isEqualTo(2);
            assertThat(records(store, RUN)).hasSize(2);
        }
        assertThat(schemaVersions(db)).containsExactly(JdbcResultStore.SCHEMA_VERSION);

        // Opening the upgraded file again neither upgrades it twice nor loses anything.
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isEqualTo(2);
            assertThat(store.runs()).isEmpty();
        }
        assertThat(schemaVersions(db)).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void aNewDatabaseStartsAtTheCurrentVersion() throws Exception {
        Path db = dir.resolve("new.db");
        JdbcResultStore.openSqlite(db).close();
        assertThat(schemaVersions(db)).containsExactly(JdbcResultStore.SCHEMA_VERSION);
    }

    @Test
    void aRecordOfAJobKeepsItsRunModelEpochPromptExpectedMetadataAndScore() throws Exception {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("topic", "geo");
        metadata.put("level", 3);
        metadata.put("tags", List.of("a", "b"));
        Job job = job("r1-m-e1-0000", "r1", 1, "meta-llama/Llama-3.1-8B",
                new Vignette("capital", "Capital of France?", "Paris", metadata),
                new Vignette("open", null, "", Map.of(), List.of(new ChatMessage("system", "be kind"),
                        ChatMessage.user("Tell a story")), null),
                new Vignette("sum", "2+2?", "4", Map.of(), List.of(), "numeric"),
                new Vignette("wrong", "Capital of Italy?", "Rome", Map.of()));

        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))
                .withScoring(new RunScoring("normalized"))) {
            store.record(job, answers(job, "The Paris.", "Once upon a time", "It is 4.0", "Milan"), "w1");

            StoredRecord capital = record(store, "capital");
            assertThat(capital.context().runId()).isEqualTo("r1");
            assertThat(capital.context().model()).isEqualTo("meta-llama/Llama-3.1-8B");
            assertThat(capital.context().epoch()).isEqualTo(1);
            assertThat(capital.context().prompt()).isEqualTo("Capital of France?");
            assertThat(capital.context().expected()).isEqualTo("Paris");
            assertThat(new ObjectMapper().readTree(capital.context().metadataJson()))
                    .isEqualTo(new ObjectMapper().valueToTree(metadata));
            assertThat(capital.score()).isEqualTo(new ScoreEntry("normalized", 1.0, null));

            StoredRecord open = record(store, "open");
            assertThat(open.context().prompt()).isEqualTo("system: be kind\nuser: Tell a story");
            assertThat(open.context().metadataJson()).isNull();
            assertThat(open.score()).isNull();

            StoredRecord sum = record(store, "sum");
            assertThat(sum.score().scorer()).isEqualTo("numeric");
            assertThat(sum.score().score()).isEqualTo(1.0);
            assertThat(sum.score().explanation()).contains("read 4");

            StoredRecord wrong = record(store, "wrong");
            assertThat(wrong.score().scorer()).isEqualTo("normalized");
            assertThat(wrong.score().score()).isEqualTo(0.0);
            assertThat(wrong.score().explanation()).contains("milan").contains("rome");
        }
    }

    @Test
    void aRecordStoredWithoutItsJobHasNoContextAndNoScore() {
        Job job = TestJobs.job("j1", "hi");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))
                .withScoring(new RunScoring("exact"))) {
            store.record(TestJobs.echo(job), "w1");
            assertThat(records(store, null)).singleElement().satisfies(r -> {
                assertThat(r.context()).isEqualTo(RecordContext.NONE);
                assertThat(r.score()).isNull();
            });
        }
    }

    @Test
    void theFirstGradeOfAnAnswerThatWaitsForOneStandsAndScoredAnswersTakeNoGrade() {
        Job job = job("j1", "r1", 0, "m", new Vignette("judged", null, "Paris", Map.of(),
                        List.of(ChatMessage.user("Capital of France?")), "judge:gpt-4o"),
                new Vignette("exact", "2+2?", "4", Map.of()));
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))
                .withScoring(new RunScoring("exact"))) {
            store.record(job, answers(job, "Paris, of course", "4"), "w1");
            assertThat(record(store, "judged").score()).isEqualTo(new ScoreEntry("judge:gpt-4o", null, null));

            assertThat(store.recordGrade(job.id(), "judged", new ScoreEntry("judge:gpt-4o", 1.0, "names Paris")))
                    .isTrue();
            assertThat(store.recordGrade(job.id(), "judged", new ScoreEntry("judge:gpt-4o", 0.0, "second opinion")))
                    .isFalse();
            assertThat(record(store, "judged").score()).isEqualTo(new ScoreEntry("judge:gpt-4o", 1.0, "names Paris"));

            assertThat(store.recordGrade(job.id(), "exact", new ScoreEntry("judge:gpt-4o", 0.0, "no"))).isFalse();
            assertThat(record(store, "exact").score()).isEqualTo(new ScoreEntry("exact", 1.0, null));

            assertThat(store.recordGrade(job.id(), "missing", new ScoreEntry("judge:gpt-4o", 1.0, null))).isFalse();
            assertThat(store.recordGrade(JobId.of("other"), "judged", new ScoreEntry("judge:gpt-4o", 1.0, null)))
                    .isFalse();
        }
    }

    @Test
    void rescoringAddsAScoringOfThatRunOnly() {
        Job first = job("r1-0000", "r1", 0, null, new Vignette("a", "x", "yes", Map.of()),
                new Vignette("b", "y", "no", Map.of()));
        Job second = job("r2-0000", "r2", 0, null, new Vignette("a", "x", "yes", Map.of()));
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))
                .withScoring(new RunScoring("exact"))) {
            store.record(first, answers(first, "yes", "yes"), "w1");
            store.record(second, answers(second, "yes"), "w1");

            Scoring rescored = store.rescore("r1", "includes", r -> r.record().vignetteId().equals("a")
                    ? new ScoreEntry("includes", 0.5, "rescored " + r.context().expected()) : null);

            assertThat(rescored.number()).isEqualTo(2);
            assertThat(records(store, "r1")).extracting(StoredRecord::score).containsExactlyInAnyOrder(
                    new ScoreEntry("includes", 0.5, "rescored yes"), null);
            assertThat(records(store, "r2")).extracting(StoredRecord::score)
                    .containsExactly(new ScoreEntry("exact", 1.0, null));
            assertThat(store.rescore("nothing-here", "exact", r -> null).number()).isEqualTo(1);
        }
    }

    @Test
    void runsAreNotedReplacedButTheirFirstStartWhenStartedAgainEachStartASittingAndListedLatestCreatedFirst() {
        RunEntry first = new RunEntry("r1", "suite.jsonl", List.of("gpt-4o", "meta-llama/Llama-3.1-8B"),
                "normalized", 2, 10, Instant.ofEpochMilli(1_000));
        RunEntry second = new RunEntry("r2", "other.csv", List.of(), "judge:gpt-4o", 1, 3,
                Instant.ofEpochMilli(2_000));
        RunEntry firstAgain = new RunEntry("r1", "suite.jsonl", List.of("gpt-4o"), "exact", 3, 11,
                Instant.ofEpochMilli(3_000));
        Path db = dir.resolve("r.db");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.recordRun(first);
            store.recordRun(second);
            assertThat(withoutSittings(store.runs())).containsExactly(second, first);

            store.recordRun(firstAgain);
            assertThat(withoutSittings(store.runs())).containsExactly(second, keptFirstStart(firstAgain, first));
        }
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(withoutSittings(store.runs())).containsExactly(second, keptFirstStart(firstAgain, first));
            RunEntry r1 = store.runs().get(1);
            assertThat(r1.sittings()).extracting(RunSitting::startedAt)
                    .containsExactly(Instant.ofEpochMilli(1_000), Instant.ofEpochMilli(3_000));
            assertThat(r1.lastStartedAt()).isEqualTo(Instant.ofEpochMilli(3_000));
        }
    }

    @Test
    void workerEventsAddUpPerRunAndWorker() {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.addWorkerEvents("r1", "w2", 1, 0);
            store.addWorkerEvents("r1", "w1", 2, 1);
            store.addWorkerEvents("r1", "w1", 3, 0);
            store.addWorkerEvents("r2", "w1", 7, 7);

            assertThat(store.workerEvents("r1")).containsExactly(
                    new WorkerEventCount("w1", 5, 1), new WorkerEventCount("w2", 1, 0));
            assertThat(store.workerEvents("r2")).containsExactly(new WorkerEventCount("w1", 7, 7));
            assertThat(store.workerEvents("r3")).isEmpty();
        }
    }

    @Test
    void aFailureRecordedWithItsJobCarriesItsRunAndModel() {
        Job job = job("r1-m-e0-0000", "r1", 0, "gpt-4o", new Vignette("a", "x"));
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.recordFailure(job, "model API answered 404", 2);
            store.recordFailure(JobId.of("loose"), "gone", 1);

            List<JobFailure> failures = new ArrayList<>();
            store.forEachFailure(failures::add);

            assertThat(failures).extracting(JobFailure::jobId, JobFailure::reason, JobFailure::attempts,
                    JobFailure::runId, JobFailure::model).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(JobId.of("loose"), "gone", 1, null, null),
                    org.assertj.core.groups.Tuple.tuple(job.id(), "model API answered 404", 2, "r1", "gpt-4o"));
        }
    }

    @Test
    void whatStoppedASittingIsKeptWithItAndALaterSittingHasNoneUntilItIsStoppedToo() {
        RunEntry run = new RunEntry("r1", "suite.jsonl", List.of("gpt-4o"), "exact", 1, 10, Instant.ofEpochMilli(1_000));
        RunStop budget = new RunStop(RunStop.BUDGET, "the cost budget (--max-cost) stopped the run");
        Path db = dir.resolve("stops.db");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.stopRun("r1", budget);
            assertThat(store.runs()).as("a run not noted has no sitting to stop").isEmpty();
            store.recordRun(run);
            store.finishRun("r1");
            store.stopRun("r1", budget);
        }
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.runs().get(0).sittings()).extracting(RunSitting::stop).containsExactly(budget);
            store.recordRun(run);
            store.finishRun("r1");
            assertThat(store.runs().get(0).sittings()).extracting(RunSitting::stop).containsExactly(budget, null);
            RunStop gate = new RunStop(RunStop.GATE, "--fail-under 0.9 failed");
            store.stopRun("r1", gate);
            store.stopRun("r1", gate);
            assertThat(store.runs().get(0).sittings()).extracting(RunSitting::stop).containsExactly(budget, gate);
            store.deleteRun("r1");
            store.recordRun(run);
            assertThat(store.runs().get(0).sittings()).extracting(RunSitting::stop)
                    .as("a run deleted and noted again starts without stops").containsExactly((RunStop) null);
        }
    }

    /** The entries as noted, without their sittings. */
    static List<RunEntry> withoutSittings(List<RunEntry> runs) {
        return runs.stream().map(r -> new RunEntry(r.runId(), r.suite(), r.models(), r.scorer(), r.epochs(),
                r.vignettes(), r.startedAt(), r.manifest(), r.finishedAt())).toList();
    }

    /** {@code again} as a run started again is listed: with the first start of {@code first}. */
    static RunEntry keptFirstStart(RunEntry again, RunEntry first) {
        return new RunEntry(again.runId(), again.suite(), again.models(), again.scorer(), again.epochs(),
                again.vignettes(), first.startedAt(), again.manifest(), again.finishedAt());
    }
}
