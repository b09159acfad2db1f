package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ResultStore.Answer;
import dev.panoptes.control.store.ResultStore.Receipt;
import dev.panoptes.control.store.ResultStore.Written;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JdbcResultStore#onStored}: the listener hears of each outcome once it is committed, by
 * every path that stores answers (one by one, in a batch, a batch written again after a refusal,
 * the response cache's), with the receipt and the scores stored; not of a refused one; and what it
 * throws does not undo or fail the write.
 */
class StoredAnswersTest {
    @TempDir
    Path dir;

    /** What one call told. */
    private record Told(String job, List<String> vignettes, List<Double> scores, Map<String, String> cachedFrom,
                        Receipt receipt) {
    }

    /** One over the answer's length (a score is between 0 and 1). */
    private static final RecordScoring LENGTH = new RecordScoring() {
        @Override
        public ScoreEntry score(Vignette vignette, dev.panoptes.control.ResponseRecord record) {
            return new ScoreEntry("len", 1.0 / record.response().length(), null);
        }

        @Override
        public String spec() {
            return "len";
        }
    };

    @Test
    void everyCommittedOutcomeIsToldWithItsReceiptAndScores() {
        List<Told> told = new ArrayList<>();
        StoredAnswers listener = (job, rows, vignettes, scores, cachedFrom, receipt) -> {
            List<String> ids = new ArrayList<>();
            List<Double> s = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                ids.add(vignettes[i].id());
                assertThat(vignettes[i].id()).isEqualTo(rows.get(i).vignetteId());
                s.add(scores == null || scores[i] == null ? null : scores[i].score());
            }
            told.add(new Told(job.id().value(), ids, s, Map.copyOf(cachedFrom), receipt));
        };
        Job one = TestJobs.job("one", "a", "bb");
        Job two = TestJobs.job("two", "ccc");
        Job bad = new Job(JobId.of("bad"), new EvalSpec("test", List.of(new Vignette("v0", "a", null,
                Map.of("odd", new Object())))));
        Job cached = TestJobs.job("cached", "d");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db")).withScoring(LENGTH)
                .onStored(listener)) {
            store.record(one, TestJobs.echo(one), "w1");
            List<Written> done = new ArrayList<>();
            // Refused for its metadata: the batch is written again answer by answer, two stored.
            store.recordAll(List.of(new Answer(bad, TestJobs.echo(bad), "w1"), new Answer(two, TestJobs.echo(two), "w1"),
                    new Answer(one, TestJobs.echo(one), "w2")), done);
            store.store(cached, TestJobs.echo(cached), "(cache)", Map.of("v0", "earlier"));

            assertThat(done.get(0).refused()).isNotNull();
            assertThat(told).containsExactly(
                    new Told("one", List.of("v0", "v1"), List.of(1 / 5.0, 1 / 6.0), Map.of(), new Receipt(2, 0)),
                    new Told("two", List.of("v0"), List.of(1 / 7.0), Map.of(), new Receipt(1, 0)),
                    new Told("one", List.of("v0", "v1"), List.of(1 / 5.0, 1 / 6.0), Map.of(), new Receipt(0, 2)),
                    new Told("cached", List.of("v0"), List.of(1 / 5.0), Map.of("v0", "earlier"), new Receipt(1, 0)));
            assertThat(store.recordCount()).isEqualTo(4);
        }
    }

    @Test
    void aListenerThatThrowsLeavesTheAnswersStoredAndTheWriteSucceeding() {
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("t.db")).onStored(
                (j, rows, vignettes, scores, cachedFrom, receipt) -> {
                    throw new IllegalStateException("a listener's bug");
                })) {
            assertThat(store.record(job, TestJobs.echo(job), "w")).isEqualTo(new Receipt(1, 0));
            assertThat(store.storedVignetteIds(job.id())).containsExactly("v0");
            // Without a scoring no score is told.
            List<ScoreEntry[]> scores = new ArrayList<>();
            store.onStored((j, rows, vignettes, s, cachedFrom, receipt) -> scores.add(s));
            Job other = TestJobs.job("k", "b");
            store.record(other, TestJobs.echo(other), "w");
            assertThat(scores).hasSize(1).containsOnlyNulls();
        }
    }
}
