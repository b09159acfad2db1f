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
 * A batch that holds an answer the database refuses is written again one answer at a time; the
 * duplicates met on that path count in the store's total (the summary's "duplicates ignored")
 * as they do in a batch that went through whole.
 */
class RefusedBatchDuplicatesTest {
    @TempDir
    Path dir;

    @Test
    void duplicatesMetWhileABatchIsWrittenAgainAnswerByAnswerAreCounted() {
        Job bad = new Job(JobId.of("bad"), new EvalSpec("test", List.of(new Vignette("v0", "a", null,
                Map.of("odd", new Object())))));
        Job again = TestJobs.job("again", "a", "b");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.record(again, TestJobs.echo(again), "w1");
            assertThat(store.duplicateCount()).isZero();

            List<Written> done = new ArrayList<>();
            store.recordAll(List.of(new Answer(bad, TestJobs.echo(bad), "w1"),
                    new Answer(again, TestJobs.echo(again), "w2")), done);

            assertThat(done.get(0).refused()).isNotNull();
            assertThat(done.get(1).receipt()).isEqualTo(new Receipt(0, 2));
            assertThat(store.duplicateCount()).isEqualTo(2);
            assertThat(store.recordCount()).isEqualTo(2);
        }
    }
}
