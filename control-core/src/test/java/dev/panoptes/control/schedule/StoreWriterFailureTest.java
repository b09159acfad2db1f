package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.RecordRejectedException;
import dev.panoptes.control.store.ResultStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the {@link StoreWriter} tells the run when the store fails in ways other than being away:
 * a store that breaks (throws something other than a {@link dev.panoptes.control.store.StoreException})
 * after writing part of a batch has those answers told as stored before the run hears the writer
 * gave up; a final failure the store refuses is that job's own refusal, not an outage that would
 * stop the run. Inline, so that the test steps it.
 */
class StoreWriterFailureTest {
    private final List<Runnable> posted = new ArrayList<>();
    private final List<String> heard = new ArrayList<>();
    /** An outage ends the run after 300 ms: a write wrongly taken as an outage shows at once. */
    private final SchedulerOptions.StoreRetry retry = new SchedulerOptions.StoreRetry(Duration.ofMillis(1),
            Duration.ofMillis(2), Duration.ofMillis(300), 1_000);

    private StoreWriter writer(ResultStore store) {
        return new StoreWriter(store, retry, posted::add, new StoreWriter.Outcomes() {
            @Override
            public void stored(StoreWriter.RecordWrite write, ResultStore.Receipt receipt) {
                heard.add("stored " + write.state().job.id());
            }

            @Override
            public void failureStored(StoreWriter.FailureWrite write) {
                heard.add("failure " + write.state().job.id());
            }

            @Override
            public void refused(StoreWriter.Write write, RecordRejectedException error) {
                heard.add("refused " + write.state().job.id());
            }

            @Override
            public void down(String error, int held) {
                heard.add("down " + held);
            }

            @Override
            public void back(Duration outage, int held) {
                heard.add("back " + held);
            }

            @Override
            public void lost(Throwable error, Duration outage, int held, boolean permanent) {
                heard.add("lost " + held + (permanent ? " for good: " + error.getMessage() : ""));
            }
        }, true);
    }

    private void runPosted() {
        List<Runnable> events = new ArrayList<>(posted);
        posted.clear();
        events.forEach(Runnable::run);
    }

    @Test
    void answersStoredBeforeTheStoreBrokeAreToldStoredBeforeTheRunHearsItGaveUp() {
        InMemoryResultStore memory = new InMemoryResultStore();
        ResultStore store = new ForwardingResultStore(memory) {
            @Override
            public void recordAll(List<Answer> answers, List<Written> done) {
                // Two answers written and reported, then a bug of the store's own.
                forwardRecordAll(answers.subList(0, 2), done);
                throw new IllegalStateException("a bug in the store");
            }
        };
        StoreWriter writer = writer(store);
        List<Job> jobs = TestJobs.jobs("j", 5);
        StoreWriterBatchTest.submitAnswers(writer, jobs);

        writer.writeQueuedHere();
        runPosted();

        assertThat(memory.recordCount()).isEqualTo(2);
        assertThat(heard).containsExactly("stored j-0", "stored j-1", "lost 3 for good: a bug in the store");
        assertThat(writer.held()).isEqualTo(3);
    }

    @Test
    void aFinalFailureTheStoreRefusesIsThatJobsRefusalNotAnOutage() {
        InMemoryResultStore memory = new InMemoryResultStore();
        ResultStore store = new ForwardingResultStore(memory) {
            @Override
            public void recordFailure(Job job, String reason, int attempts) {
                throw new RecordRejectedException("the database refuses the reason of " + job.id(), null);
            }

            @Override
            public void recordAll(List<Answer> answers, List<Written> done) {
                forwardRecordAll(answers, done);
            }
        };
        StoreWriter writer = writer(store);
        Job before = TestJobs.job("before", "x");
        Job failed = TestJobs.job("failed", "x");
        Job after = TestJobs.job("after", "x");
        StoreWriterBatchTest.submitAnswers(writer, List.of(before));
        writer.submit(new StoreWriter.FailureWrite(new JobState(failed), "gave up", 3));
        StoreWriterBatchTest.submitAnswers(writer, List.of(after));

        writer.writeQueuedHere();
        runPosted();

        assertThat(heard).containsExactly("stored before", "refused failed", "stored after");
        assertThat(writer.held()).isZero();
        assertThat(writer.accepting()).as("the store is not down").isTrue();
        assertThat(memory.recordCount()).isEqualTo(2);
    }
}
