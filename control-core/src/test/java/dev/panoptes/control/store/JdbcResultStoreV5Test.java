package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema version 5 on SQLite: a sandboxed sample's transcript is stored with its answer, once
 * however often the sample is delivered, read back with it (not by the figures-only read), and
 * removed with its run; a version 4 database is upgraded, its records kept without transcripts.
 */
class JdbcResultStoreV5Test extends SqliteFileStoreTest {
    /** A transcript as a worker writes it, with text that needs escaping wherever it is shown. */
    static final String TRANSCRIPT = "{\"messages\":[{\"role\":\"user\",\"content\":\"How many lines?\"},"
            + "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
            + "\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":\\\"wc -l data.txt\\\"}\"}}]},"
            + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"3 data.txt </script>\\n\"},"
            + "{\"role\":\"assistant\",\"content\":\"3\"}],\"events\":[{\"type\":\"model\",\"turn\":1},"
            + "{\"type\":\"tool\",\"id\":\"call_1\",\"name\":\"bash\",\"exitStatus\":0,\"durationMs\":12}],"
            + "\"turns\":2,\"tokens\":40,\"check\":{\"command\":\"test 3 = 3\",\"exitStatus\":0,\"passed\":true}}";

    @Test
    void aTranscriptIsStoredOnceWithItsAnswerHoweverOftenTheSampleIsDelivered() {
        checkTranscriptStoredOnce(this::open);
    }

    @Test
    void aVersion4DatabaseIsUpgradedItsRecordsKeptWithoutTranscripts() throws Exception {
        checkUpgradeFromVersion4(this::execute, this::open);
        try (Connection c = plain();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT MAX(version) FROM panoptes_schema")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(JdbcResultStore.SCHEMA_VERSION).isGreaterThanOrEqualTo(5);
        }
    }

    static Job job(String id, String run) {
        return new Job(JobId.of(id), new EvalSpec("agent", List.of(new Vignette("count-lines", "How many lines?")),
                SpecParams.NONE.withModel("m")), run, 0);
    }

    static JobOutcome answer(Job job, String response, String transcript) {
        return new JobOutcome(job.id(), List.of(new ResponseRecord("count-lines", response, "m", "stop", 30L,
                new Usage(30, 10), null, transcript)));
    }

    static List<StoredRecord> records(JdbcResultStore store, String run) {
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(run, records::add);
        return records;
    }

    /**
     * A sample delivered twice (the worker that ran it first was thought lost, so another ran it
     * again) and once more in a batch of two copies: one answer, the first delivery's transcript,
     * read back whole; the figures-only read leaves it out; deleting the run removes it. Shared
     * with {@link PostgresResultStoreTest}.
     */
    static void checkTranscriptStoredOnce(Supplier<JdbcResultStore> open) {
        Job job = job("tttt-m-e0-0000", "tttt");
        String second = TRANSCRIPT.replace("wc -l data.txt", "cat data.txt | wc -l");
        try (JdbcResultStore store = open.get()) {
            assertThat(store.record(job, answer(job, "3", TRANSCRIPT), "w1")).isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(store.record(job, answer(job, "3", second), "w2")).isEqualTo(new ResultStore.Receipt(0, 1));
            List<ResultStore.Written> done = new ArrayList<>();
            store.recordAll(List.of(new ResultStore.Answer(job, answer(job, "3", second), "w3"),
                    new ResultStore.Answer(job, answer(job, "3", second), "w3")), done);
            assertThat(done).extracting(ResultStore.Written::receipt)
                    .containsExactly(new ResultStore.Receipt(0, 1), new ResultStore.Receipt(0, 1));

            Job other = job("uuuu-m-e0-0000", "uuuu");
            store.record(other, answer(other, "4", null), "w1");
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(records(store, "tttt")).singleElement().satisfies(r -> {
                assertThat(r.workerId()).isEqualTo("w1");
                assertThat(r.record().transcript()).isEqualTo(TRANSCRIPT);
            });
            assertThat(records(store, "uuuu")).singleElement()
                    .satisfies(r -> assertThat(r.record().transcript()).isNull());
            List<StoredRecord> figures = new ArrayList<>();
            store.forEachRecordWithoutTexts("tttt", 0, figures::add);
            assertThat(figures).singleElement().satisfies(r -> assertThat(r.record().transcript()).isNull());

            assertThat(store.deleteRun("tttt").records()).isEqualTo(1);
            assertThat(records(store, "tttt")).isEmpty();
            // Stored again after the delete: the transcript comes back with it, not a leftover.
            store.record(job, answer(job, "3", second), "w4");
            assertThat(records(store, "tttt")).singleElement()
                    .satisfies(r -> assertThat(r.record().transcript()).isEqualTo(second));
        }
    }

    /** Runs SQL on the database under test. */
    interface Sql {
        void execute(String... statements) throws Exception;
    }

    /**
     * A version 4 database (the current one with the transcript column dropped) opens upgraded:
     * its record is kept, without a transcript; one stored now keeps its own. Shared with
     * {@link PostgresResultStoreTest}.
     */
    static void checkUpgradeFromVersion4(Sql sql, Supplier<JdbcResultStore> open) throws Exception {
        Job old = job("aaaa-m-e0-0000", "aaaa");
        try (JdbcResultStore store = open.get()) {
            store.record(old, answer(old, "3", null), "w");
        }
        sql.execute("ALTER TABLE panoptes_records DROP COLUMN transcript", "UPDATE panoptes_schema SET version = 4");

        Job next = job("bbbb-m-e0-0000", "bbbb");
        try (JdbcResultStore store = open.get()) {
            assertThat(records(store, "aaaa")).singleElement().satisfies(r -> {
                assertThat(r.record().response()).isEqualTo("3");
                assertThat(r.record().transcript()).isNull();
            });
            store.record(next, answer(next, "3", TRANSCRIPT), "w");
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).as("opened again: nothing upgraded twice or lost").isEqualTo(2);
            assertThat(records(store, "bbbb")).singleElement()
                    .satisfies(r -> assertThat(r.record().transcript()).isEqualTo(TRANSCRIPT));
        }
    }
}
