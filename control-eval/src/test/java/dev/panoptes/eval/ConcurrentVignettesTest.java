package dev.panoptes.eval;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link EvalJobRunner#start} with {@link RequestPermits}: a job's vignettes run at once within the
 * worker's budget of requests in flight, shared by its jobs; records stay in spec order; a
 * vignette's failure stays its own; however a job ends, its permits go back.
 */
class ConcurrentVignettesTest {
    /** A client whose calls stay open until the test answers them, in any order. */
    private static final class HeldModel implements ModelClient {
        final List<ModelRequest> requests = Collections.synchronizedList(new ArrayList<>());
        final List<CompletableFuture<ModelResponse>> calls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public ModelResponse complete(ModelRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
            CompletableFuture<ModelResponse> call = new CompletableFuture<>();
            requests.add(request);
            calls.add(call);
            return call;
        }

        long open() {
            synchronized (calls) {
                return calls.stream().filter(c -> !c.isDone()).count();
            }
        }

        int newestOpen() {
            synchronized (calls) {
                for (int i = calls.size() - 1; i >= 0; i--) {
                    if (!calls.get(i).isDone()) {
                        return i;
                    }
                }
            }
            throw new AssertionError("no call open");
        }

        void answer(int call) {
            calls.get(call).complete(new ModelResponse("re: " + requests.get(call).prompt(), "stop", "m", null, 1));
        }
    }

    private static String[] prompts(int n) {
        String[] prompts = new String[n];
        for (int i = 0; i < n; i++) {
            prompts[i] = "p" + i;
        }
        return prompts;
    }

    @Test
    void aJobsVignettesRunAtOnceWithinTheBudgetAndAnswerInSpecOrder() throws Exception {
        HeldModel model = new HeldModel();
        RequestPermits permits = new RequestPermits(4);
        CompletableFuture<JobOutcome> job = new EvalJobRunner(model, permits).start(TestJobs.job("j", prompts(10)));

        assertThat(model.open()).isEqualTo(4);
        assertThat(permits.inUse()).isEqualTo(4);
        // Answered last first: each answer lets the next vignette out, and the order holds.
        for (int answered = 0; answered < 10; answered++) {
            model.answer(model.newestOpen());
            assertThat(model.open()).isEqualTo(Math.min(4, 10 - answered - 1));
        }

        JobOutcome outcome = job.get(5, TimeUnit.SECONDS);
        assertThat(outcome.records()).extracting(ResponseRecord::vignetteId)
                .containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
        assertThat(outcome.records()).extracting(ResponseRecord::response).first().isEqualTo("re: p0");
        assertThat(permits.inUse()).isZero();
    }

    @Test
    void theJobsOfAWorkerShareOneBudgetTheFirstStartedServedFirst() {
        HeldModel model = new HeldModel();
        RequestPermits permits = new RequestPermits(4);
        EvalJobRunner runner = new EvalJobRunner(model, permits);
        CompletableFuture<JobOutcome> first = runner.start(TestJobs.job("a", prompts(3)));
        CompletableFuture<JobOutcome> second = runner.start(TestJobs.job("b", prompts(3)));
        CompletableFuture<JobOutcome> third = runner.start(TestJobs.job("c", prompts(3)));

        assertThat(model.open()).isEqualTo(4);
        model.answer(0);
        model.answer(1);
        model.answer(2);

        assertThat(first).isCompleted();
        // The freed permits went to the second job before the third.
        assertThat(model.requests).extracting(ModelRequest::prompt).containsExactly("p0", "p1", "p2", "p0", "p1", "p2",
                "p0");
        assertThat(second).isNotDone();
        assertThat(third).isNotDone();
    }

    @Test
    void aVignetteTheApiRefusesIsAFailedAnswerAndItsNeighboursAnswer() throws Exception {
        HeldModel model = new HeldModel();
        CompletableFuture<JobOutcome> job = new EvalJobRunner(model, new RequestPermits(8))
                .start(TestJobs.job("j", prompts(3)));

        model.answer(2);
        model.calls.get(1).completeExceptionally(new JobFailedException("HTTP 400: context length exceeded"));
        model.answer(0);

        JobOutcome outcome = job.get(5, TimeUnit.SECONDS);
        assertThat(outcome.records()).extracting(ResponseRecord::vignetteId).containsExactly("v0", "v1", "v2");
        assertThat(outcome.records().get(0).isFailed()).isFalse();
        assertThat(outcome.records().get(1).isFailed()).isTrue();
        assertThat(outcome.records().get(1).error()).contains("context length exceeded");
        assertThat(outcome.records().get(2).response()).isEqualTo("re: p2");
    }

    @Test
    void aWorkersFaultFailsTheJobCancelsItsOtherCallsAndGivesBackItsPermits() {
        HeldModel model = new HeldModel();
        RequestPermits permits = new RequestPermits(3);
        CompletableFuture<JobOutcome> job = new EvalJobRunner(model, permits).start(TestJobs.job("j", prompts(5)));

        model.calls.get(1).completeExceptionally(new WorkerFaultException("its key was refused"));

        assertThatThrownBy(job::join).isInstanceOf(CompletionException.class)
                .cause().isExactlyInstanceOf(WorkerFaultException.class)
                .hasMessageContaining("its key was refused").hasMessageContaining("vignette 'v1' (2 of 5)");
        assertThat(model.calls.get(0)).isCancelled();
        assertThat(model.calls.get(2)).isCancelled();
        assertThat(model.requests).as("nothing sent after the failure").hasSize(3);
        assertThat(permits.inUse()).isZero();
    }

    @Test
    void cancelledJobsGiveBackEveryPermitAndTheBudgetIsWholeAfterMany() throws Exception {
        HeldModel model = new HeldModel();
        RequestPermits permits = new RequestPermits(8);
        EvalJobRunner runner = new EvalJobRunner(model, permits);
        for (int round = 0; round < 200; round++) {
            List<CompletableFuture<JobOutcome>> jobs = new ArrayList<>();
            for (int j = 0; j < 3; j++) {
                jobs.add(runner.start(TestJobs.job("r" + round + "-" + j, prompts(5))));
            }
            // Some answered, some in flight, some waiting for a permit: all cancelled.
            model.answer(model.calls.size() - 8);
            for (CompletableFuture<JobOutcome> job : jobs) {
                job.cancel(true);
            }
            assertThat(permits.inUse()).as("round %d", round).isZero();
        }
        assertThat(model.open()).isZero();

        CompletableFuture<JobOutcome> job = runner.start(TestJobs.job("after", prompts(20)));
        assertThat(model.open()).isEqualTo(8);
        int from = model.calls.size() - 8;
        for (int i = from; i < from + 20; i++) {
            model.answer(i);
        }
        assertThat(job.get(5, TimeUnit.SECONDS).records()).hasSize(20);
        assertThat(permits.inUse()).isZero();
    }

    @Test
    void thousandsOfVignettesAnsweredAtOnceAcrossJobsNeedNoDeepStacks() throws Exception {
        ModelClient immediate = new ModelClient() {
            @Override
            public ModelResponse complete(ModelRequest request) {
                return new ModelResponse("re: " + request.prompt(), "stop", "m", null, 0);
            }

            @Override
            public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
                return CompletableFuture.completedFuture(complete(request));
            }
        };
        EvalJobRunner runner = new EvalJobRunner(immediate, new RequestPermits(64));
        List<CompletableFuture<JobOutcome>> jobs = new ArrayList<>();
        for (int j = 0; j < 200; j++) {
            jobs.add(runner.start(TestJobs.job("j" + j, prompts(100))));
        }
        for (CompletableFuture<JobOutcome> job : jobs) {
            assertThat(job.get(10, TimeUnit.SECONDS).records()).hasSize(100);
        }
        assertThat(runner.permits().inUse()).isZero();
    }

    @Test
    void aPermitReleasedTwiceIsABug() {
        RequestPermits permits = new RequestPermits(1);
        assertThat(permits.acquire(0, () -> { })).isNull();
        permits.release();

        assertThatThrownBy(permits::release).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new RequestPermits(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
    }

    @Test
    void aNullFutureFailsTheJobRetryablyAndReturnsThePermit() {
        RequestPermits permits = new RequestPermits(2);
        ModelClient broken = new ModelClient() {
            @Override
            public ModelResponse complete(ModelRequest request) {
                return null;
            }

            @Override
            public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
                return null;
            }
        };
        Job job = TestJobs.job("j", prompts(3));

        assertThatThrownBy(() -> new EvalJobRunner(broken, permits).start(job).join())
                .cause().isExactlyInstanceOf(WorkerException.class).hasMessageContaining("no future");
        assertThat(permits.inUse()).isZero();
    }
}
