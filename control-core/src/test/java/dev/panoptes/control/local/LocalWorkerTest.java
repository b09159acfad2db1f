package dev.panoptes.control.local;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class LocalWorkerTest {
    @Test
    void runsUpToCapacityJobsAtOnceAndNoMore() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        try (LocalWorker worker = new LocalWorker("w", 2, job -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            release.await();
            running.decrementAndGet();
            return TestJobs.echo(job);
        })) {
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            for (Job job : TestJobs.jobs("j", 5)) {
                replies.add(worker.dispatch(job));
            }
            await().atMost(5, TimeUnit.SECONDS).until(() -> running.get() == 2);
            release.countDown();
            for (CompletableFuture<JobOutcome> r : replies) {
                assertThat(r.get(5, TimeUnit.SECONDS).records()).hasSize(1);
            }
            assertThat(maxRunning.get()).isEqualTo(2);
        }
    }

    @Test
    void failuresKeepTheirRetryabilityAndOtherExceptionsBecomeRetryable() {
        try (LocalWorker worker = new LocalWorker("w", 1, job -> {
            switch (job.id().value()) {
                case "permanent":
                    throw new JobFailedException("bad request");
                case "transient":
                    throw new WorkerException("503");
                default:
                    throw new IllegalStateException("bug in runner");
            }
        })) {
            assertThat(failure(worker, "permanent")).isInstanceOf(JobFailedException.class);
            assertThat(failure(worker, "transient")).isInstanceOf(WorkerException.class);
            assertThat(failure(worker, "other")).isInstanceOf(WorkerException.class)
                    .hasMessageContaining("local worker w failed on job other")
                    .hasCauseInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closeFailsQueuedAndRunningJobsRetryably() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        LocalWorker worker = new LocalWorker("w", 1, job -> {
            started.countDown();
            new CountDownLatch(1).await();
            return TestJobs.echo(job);
        });
        CompletableFuture<JobOutcome> running = worker.dispatch(TestJobs.job("a", "x"));
        CompletableFuture<JobOutcome> queued = worker.dispatch(TestJobs.job("b", "y"));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();

        worker.close();

        for (CompletableFuture<JobOutcome> f : List.of(running, queued)) {
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(WorkerException.class);
        }
        assertThat(worker.dispatch(TestJobs.job("c", "z"))).isCompletedExceptionally();
    }

    @Test
    void aRunnerThatThrowsAnErrorFailsItsJobRetryablyInsteadOfLeavingItHanging() throws Exception {
        try (LocalWorker worker = new LocalWorker("w", 1, job -> {
            if (job.id().value().equals("boom")) {
                throw new StackOverflowError("runaway recursion in a scorer");
            }
            return TestJobs.echo(job);
        })) {
            assertThat(failure(worker, "boom")).isInstanceOf(WorkerException.class)
                    .hasMessageContaining("job boom").hasMessageContaining("StackOverflowError")
                    .hasCauseInstanceOf(StackOverflowError.class);
            // The worker goes on with the next job.
            assertThat(worker.dispatch(TestJobs.job("next", "p")).get(5, TimeUnit.SECONDS).records()).hasSize(1);
        }
    }

    @Test
    void cancellingARunningJobInterruptsItAndHoldsItsSlotUntilItReturns() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        try (LocalWorker worker = new LocalWorker("w", 1, job -> {
            if (!job.id().value().equals("slow")) {
                return TestJobs.echo(job);
            }
            started.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.countDown();
                // A runner that takes its time to stop: the slot stays taken meanwhile.
                letGo.await(10, TimeUnit.SECONDS);
            }
            return TestJobs.echo(job);
        })) {
            CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("slow", "x"));
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(worker.unavailableSlots()).isZero();

            assertThat(reply.cancel(true)).isTrue();

            assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(worker.unavailableSlots()).isEqualTo(1);
            letGo.countDown();
            await().atMost(5, TimeUnit.SECONDS).until(() -> worker.unavailableSlots() == 0);
            assertThat(worker.dispatch(TestJobs.job("next", "p")).get(5, TimeUnit.SECONDS).records()).hasSize(1);
        }
    }

    @Test
    void aJobCancelledWhileQueuedNeverRuns() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        try (LocalWorker worker = new LocalWorker("w", 1, job -> {
            ran.incrementAndGet();
            release.await();
            return TestJobs.echo(job);
        })) {
            CompletableFuture<JobOutcome> first = worker.dispatch(TestJobs.job("first", "x"));
            CompletableFuture<JobOutcome> queued = worker.dispatch(TestJobs.job("queued", "y"));
            await().atMost(5, TimeUnit.SECONDS).until(() -> ran.get() == 1);
            queued.cancel(true);
            assertThat(worker.unavailableSlots()).isZero();
            release.countDown();
            first.get(5, TimeUnit.SECONDS);
            assertThat(worker.dispatch(TestJobs.job("after", "z")).get(5, TimeUnit.SECONDS).records()).hasSize(1);
            assertThat(ran.get()).isEqualTo(2);
        }
    }

    @Test
    void capacityBelowOneIsRefused() {
        assertThatThrownBy(() -> new LocalWorker("w", 0, TestJobs.echoRunner()))
                .hasMessageContaining("capacity of worker w must be at least 1, got 0");
    }

    private static ControlException failure(LocalWorker worker, String id) {
        try {
            worker.dispatch(TestJobs.job(id, "p")).get(5, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return (ControlException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("job " + id + " did not fail");
    }
}
