package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.ResultStore.Answer;
import dev.panoptes.control.store.ResultStore.Receipt;
import dev.panoptes.control.store.ResultStore.Written;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JdbcResultStore#recordAll} on a real PostgreSQL server ({@link TestPostgres}) with the
 * pgjdbc settings users put in their URLs for batch writes: whatever the driver answers per row of
 * a batch ({@code reWriteBatchedInserts=true} answers {@code SUCCESS_NO_INFO} for each), an answer
 * the batch stored counts stored and is scored, one already there counts duplicate, as with the
 * plain URL.
 */
class PostgresBatchOptionsTest {
    private final TestPostgres.Database db = TestPostgres.freshDatabase();

    private static Job job(int i) {
        return new Job(JobId.of("job-" + i), new EvalSpec("s", List.of(new Vignette("v0", "q" + i, "re: q" + i,
                Map.of()), new Vignette("v1", "p" + i, "something else", Map.of())), SpecParams.NONE.withModel("m")),
                "run1", 0);
    }

    private static List<Answer> answers(List<Job> jobs) {
        List<Answer> answers = new ArrayList<>();
        for (Job job : jobs) {
            answers.add(new Answer(job, TestJobs.echo(job), "w1"));
        }
        return answers;
    }

    @ParameterizedTest(name = "?{0}")
    @ValueSource(strings = {"", "reWriteBatchedInserts=true", "reWriteBatchedInserts=true&prepareThreshold=0",
            "reWriteBatchedInserts=true&binaryTransfer=false&defaultRowFetchSize=3",
            "prepareThreshold=0&defaultRowFetchSize=1", "preferQueryMode=simple",
            "reWriteBatchedInserts=true&preferQueryMode=extendedForPrepared"})
    void answersAreCountedStoredOrDuplicateAndScoredWhateverTheDriverAnswersPerRow(String options) {
        String url = db.url() + (options.isEmpty() ? "" : "?" + options);
        List<Job> first = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            first.add(job(i));
        }
        try (JdbcResultStore store = JdbcResultStore.openPostgres(url, db.user(), db.password())
                .withScoring((v, r) -> new ScoreEntry("exact", r.response().equals(v.expected()) ? 1.0 : 0.0,
                        null))) {
            List<Written> done = new ArrayList<>();
            store.recordAll(answers(first), done);
            assertThat(done).extracting(Written::receipt).hasSize(16).containsOnly(new Receipt(2, 0));

            // Half again (duplicates), half new, and one new answer twice in the batch.
            List<Job> second = new ArrayList<>(first.subList(8, 16));
            for (int i = 16; i < 24; i++) {
                second.add(job(i));
            }
            second.add(job(16));
            done.clear();
            store.recordAll(answers(second), done);
            List<Receipt> receipts = done.stream().map(Written::receipt).toList();
            assertThat(receipts.subList(0, 8)).as("already stored").containsOnly(new Receipt(0, 2));
            assertThat(receipts.subList(8, 16)).as("new").containsOnly(new Receipt(2, 0));
            assertThat(receipts.get(16)).as("a copy in the same batch").isEqualTo(new Receipt(0, 2));
            assertThat(store.duplicateCount()).isEqualTo(18);

            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord("run1", records::add);
            assertThat(records).hasSize(48).allSatisfy(r -> assertThat(r.score()).as("score of %s/%s", r.jobId(),
                    r.record().vignetteId()).isNotNull());
            assertThat(records.stream().filter(r -> r.score().score() == 1.0)).hasSize(24);
        }
    }
}
