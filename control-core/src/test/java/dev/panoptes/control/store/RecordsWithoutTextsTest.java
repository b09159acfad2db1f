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
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a run's figures read: every record of the run, with all it is counted by (ids, model,
 * epoch, tokens, latency, error, metadata, who stored it and when), and none of its texts.
 */
class RecordsWithoutTextsTest {
    @TempDir
    Path dir;

    @Test
    void theFiguresReadEveryRecordWithAllButItsTexts() {
        Vignette a = new Vignette("q1", "What is 2 + 2?", "4", Map.of("topic", "sums"));
        Vignette b = new Vignette("q2", "What is 3 + 3?", "6", Map.of());
        Job job = new Job(JobId.of("run1-m-e1-0000"), new EvalSpec("s", List.of(a, b),
                new SpecParams(null, null, null, null, "m")), "run1", 1);
        Job other = new Job(JobId.of("run2-m-e0-0000"), new EvalSpec("s", List.of(a),
                new SpecParams(null, null, null, null, "m")), "run2", 0);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("f.db"))) {
            store.record(job, new JobOutcome(job.id(), List.of(
                    new ResponseRecord("q1", "four, I think", "m-2024", "stop", 120L, new Usage(7, 3), null),
                    new ResponseRecord("q2", "", "m-2024", null, 80L, null, "HTTP 500 from the model API"))), "w1");
            store.record(other, new JobOutcome(other.id(), List.of(new ResponseRecord("q1", "4"))), "w2");

            List<StoredRecord> full = new ArrayList<>();
            List<StoredRecord> lean = new ArrayList<>();
            store.forEachRecord("run1", 0, full::add);
            store.forEachRecordWithoutTexts("run1", 0, lean::add);

            assertThat(lean).hasSize(2).hasSameSizeAs(full);
            for (int i = 0; i < full.size(); i++) {
                StoredRecord f = full.get(i);
                StoredRecord l = lean.get(i);
                assertThat(l.jobId()).isEqualTo(f.jobId());
                assertThat(l.workerId()).isEqualTo(f.workerId());
                assertThat(l.storedAt()).isEqualTo(f.storedAt());
                assertThat(l.score()).isEqualTo(f.score());
                assertThat(l.record().vignetteId()).isEqualTo(f.record().vignetteId());
                assertThat(l.record().usage()).isEqualTo(f.record().usage());
                assertThat(l.record().latencyMs()).isEqualTo(f.record().latencyMs());
                assertThat(l.record().error()).isEqualTo(f.record().error());
                assertThat(l.record().model()).isEqualTo(f.record().model());
                assertThat(l.context().model()).isEqualTo(f.context().model());
                assertThat(l.context().epoch()).isEqualTo(f.context().epoch()).isEqualTo(1);
                assertThat(l.context().metadataJson()).isEqualTo(f.context().metadataJson());
                assertThat(l.record().response()).isEmpty();
                assertThat(l.context().prompt()).isNull();
            }
            // A failed answer keeps its expected answer (it counts 0 in the multiple-choice figures).
            assertThat(lean.get(0).context().expected()).isNull();
            assertThat(lean.get(1).context().expected()).isEqualTo("6");
            assertThat(full.get(0).record().response()).isEqualTo("four, I think");
            assertThat(full.get(0).context().prompt()).isEqualTo("What is 2 + 2?");
            assertThat(lean.get(0).context().metadataJson()).contains("sums");
        }
    }

    @Test
    void logLikelihoodAnswersKeepTheirResponseAndExpectedChoice() {
        Vignette mc = new Vignette("c1", "Pick one", "B", Map.of());
        Job job = new Job(JobId.of("run3-m-e0-0000"), new EvalSpec("s", List.of(mc),
                new SpecParams(null, null, null, null, "m")), "run3", 0);
        String answer = "{\"resps\":[[-1.5,false],[-0.2,true]],\"lengths\":[1,1]}";
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("c.db"))) {
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("c1", answer))), "w1");
            List<StoredRecord> lean = new ArrayList<>();
            store.forEachRecordWithoutTexts("run3", 0, lean::add);

            assertThat(lean).hasSize(1);
            assertThat(lean.get(0).record().response()).isEqualTo(answer);
            assertThat(lean.get(0).context().expected()).isEqualTo("B");
            assertThat(lean.get(0).context().prompt()).isNull();
        }
    }
}
