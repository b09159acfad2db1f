package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class InMemoryResultStoreTest {
    private final InMemoryResultStore store = new InMemoryResultStore();

    @Test
    void aSecondRecordForTheSameKeyIsCountedAsDuplicateAndChangesNothing() {
        Job job = TestJobs.job("j", "a", "b");
        assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
        JobOutcome different = new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "other answer")));

        assertThat(store.record(different, "w2")).isEqualTo(new ResultStore.Receipt(0, 1));

        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(records::add);
        assertThat(records).hasSize(2).allSatisfy(r -> assertThat(r.workerId()).isEqualTo("w1"));
        assertThat(records.get(0).record().response()).isEqualTo("re: a");
        assertThat(store.duplicateCount()).isEqualTo(1);
        assertThat(store.isComplete(job)).isTrue();
    }

    @Test
    void aJobIsCompleteOnlyWhenEveryVignetteIsStored() {
        Job job = TestJobs.job("j", "a", "b");
        store.record(new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "x"))), "w");
        assertThat(store.isComplete(job)).isFalse();
        assertThat(store.completedAmong(List.of(job))).isEmpty();
    }

    @Test
    void anAnsweredJobIsNoLongerFailed() {
        Job job = TestJobs.job("j", "a");
        store.recordFailure(job.id(), "gave up", 3);
        List<JobFailure> failures = new ArrayList<>();
        store.forEachFailure(failures::add);
        assertThat(failures).singleElement().satisfies(f -> assertThat(f.attempts()).isEqualTo(3));

        store.record(TestJobs.echo(job), "w");

        failures.clear();
        store.forEachFailure(failures::add);
        assertThat(failures).isEmpty();
    }
}
