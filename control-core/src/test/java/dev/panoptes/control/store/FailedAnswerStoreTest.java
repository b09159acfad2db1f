package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A failed answer is stored with its error, read back as one, and a version 2 database gains the column. */
class FailedAnswerStoreTest {
    private static final String RUN = "0123456789abcdef";
    private static final String ERROR = "HTTP 400: This model's maximum context length is 8192 tokens. (type"
            + " invalid_request_error, code context_length_exceeded), from POST http://gpu-07:8000/v1/chat/completions";

    @TempDir
    Path dir;

    private static List<StoredRecord> records(JdbcResultStore store) {
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(RUN, records::add);
        return records;
    }

    private static Job job() {
        return new Job(JobId.of(RUN + "-0001"), new EvalSpec("s", List.of(new Vignette("v0", "2+2?", "4", null),
                new Vignette("v1", "x".repeat(100), "long", null)), SpecParams.NONE.withModel("m")), RUN, 0);
    }

    @Test
    void aFailedAnswerKeepsItsErrorAndAnAnswerHasNone() {
        Job job = job();
        JobOutcome outcome = new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "4"),
                ResponseRecord.failed("v1", "m", 12L, ERROR)));
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.record(job, outcome, "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
            // Exactly once: the same outcome again stores nothing.
            assertThat(store.record(job, outcome, "w2")).isEqualTo(new ResultStore.Receipt(0, 2));

            List<StoredRecord> stored = records(store);
            assertThat(stored).extracting(r -> r.record().vignetteId()).containsExactly("v0", "v1");
            assertThat(stored.get(0).record().isFailed()).isFalse();
            assertThat(stored.get(1).record().error()).isEqualTo(ERROR);
            assertThat(stored.get(1).record().response()).isEmpty();
            assertThat(stored.get(1).record().latencyMs()).isEqualTo(12L);
            assertThat(stored.get(1).context().model()).isEqualTo("m");
        }
    }

    @Test
    void aVersion2DatabaseGainsTheErrorColumnAndItsRecordsAreAnswers() throws Exception {
        Path db = dir.resolve("v2.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
             Statement s = c.createStatement()) {
            s.execute("CREATE TABLE panoptes_schema (version INTEGER NOT NULL)");
            s.execute("INSERT INTO panoptes_schema (version) VALUES (2)");
            s.execute("CREATE TABLE panoptes_records (job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                    + "response TEXT NOT NULL, model TEXT, finish_reason TEXT, latency_ms BIGINT, "
                    + "prompt_tokens BIGINT, completion_tokens BIGINT, worker_id TEXT NOT NULL, "
                    + "stored_at BIGINT NOT NULL, run_id TEXT, run_model TEXT, epoch INTEGER, prompt TEXT, "
                    + "expected TEXT, metadata TEXT, scorer TEXT, score DOUBLE PRECISION, explanation TEXT, "
                    + "PRIMARY KEY (job_id, vignette_id))");
            s.execute("INSERT INTO panoptes_records VALUES ('" + RUN + "-0000', 'v9', 'hello', 'llama', 'stop', 120, "
                    + "5, 2, 'w1', 1000, '" + RUN + "', 'm', 0, 'hi', 'hello', NULL, 'exact', 1.0, NULL)");
        }

        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            Job job = job();
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "4"),
                    ResponseRecord.failed("v1", "m", 12L, ERROR))), "w1");

            List<StoredRecord> stored = records(store);
            assertThat(stored).extracting(r -> r.record().vignetteId()).containsExactlyInAnyOrder("v9", "v0", "v1");
            assertThat(stored).filteredOn(r -> r.record().isFailed()).extracting(r -> r.record().vignetteId())
                    .containsExactly("v1");
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version FROM panoptes_schema")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(JdbcResultStore.SCHEMA_VERSION).isGreaterThanOrEqualTo(3);
            assertThat(rs.next()).isFalse();
        }
    }
}
