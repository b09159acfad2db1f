package dev.panoptes.control.local;

import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/** An in-process worker over an asynchronous runner fails and serves models as a remote worker does. */
class AsyncLocalWorkerTest {
    @Test
    void servesItsModelsAndAnswersOnTheRunnersThread() throws Exception {
        AsyncLocalWorker worker = new AsyncLocalWorker("local", 4, Set.of("m"), "http://api/v1",
                TestJobs.asyncEchoRunner());

        assertThat(worker.serves("m")).isTrue();
        assertThat(worker.serves(null)).isTrue();
        assertThat(worker.serves("other")).isFalse();
        assertThat(worker.endpoint()).isEqualTo("http://api/v1");
        assertThat(worker.dispatch(TestJobs.job("a", "x", "y")).get(5, TimeUnit.SECONDS).records()).hasSize(2);
    }

    @Test
    void failuresKeepTheirScopeAndEverythingElseBecomesRetryable() {
        AsyncLocalWorker worker = new AsyncLocalWorker("local", 1, Set.of(), null, job -> switch (job.id().value()) {
            case "permanent" -> CompletableFuture.failedFuture(new JobFailedException("bad request"));
            case "bug" -> CompletableFuture.failedFuture(new IllegalStateException("bug in runner"));
            case "throws" -> throw new IllegalStateException("start threw");
            default -> CompletableFuture.completedFuture(new JobOutcome(TestJobs.job("someone-else", "p").id(),
                    List.of()));
        });

        assertThat(failure(worker, "permanent")).isInstanceOf(JobFailedException.class);
        assertThat(failure(worker, "bug")).isInstanceOf(WorkerException.class)
                .hasMessageContaining("worker local failed on job bug").hasCauseInstanceOf(IllegalStateException.class);
        assertThat(failure(worker, "throws")).isInstanceOf(WorkerException.class)
                .hasMessageContaining("could not start job throws");
        assertThat(failure(worker, "wrong")).isInstanceOf(WorkerException.class)
                .hasMessageContaining("wrong outcome for job wrong");
        worker.close();
        assertThat(failure(worker, "late")).isInstanceOf(DispatchRefusedException.class);
    }

    @Test
    void cancellingAJobCancelsTheRunnersStage() {
        CompletableFuture<JobOutcome> stage = new CompletableFuture<>();
        AsyncLocalWorker worker = new AsyncLocalWorker("local", 1, Set.of(), null, job -> stage);

        CompletableFuture<JobOutcome> answer = worker.dispatch(TestJobs.job("slow", "p"));
        answer.cancel(true);

        assertThat(stage).isCancelled();
    }

    private static Throwable failure(AsyncLocalWorker worker, String jobId) {
        Job job = TestJobs.job(jobId, "p");
        Throwable thrown = catchThrowable(() -> worker.dispatch(job).get(5, TimeUnit.SECONDS));
        assertThat(thrown).isInstanceOf(ExecutionException.class);
        return thrown.getCause();
    }

    @Test
    void refusesACapacityBelowOne() {
        assertThatThrownBy(() -> new AsyncLocalWorker("local", 0, Set.of(), null, TestJobs.asyncEchoRunner()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
