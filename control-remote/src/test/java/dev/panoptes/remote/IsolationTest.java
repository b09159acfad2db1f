package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** One misbehaving worker or caller never delays the traffic of the others. */
class IsolationTest {

    @Test
    void aWorkerThatStopsReadingDoesNotDelayAnotherWorkersJobs() throws IOException {
        // One selector thread, so that both connections share it: the hardest case.
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(1));
             FakeWorker stuck = FakeWorker.register(coordinator.address(), "stuck", 1000);
             FakeWorker healthy = FakeWorker.register(coordinator.address(), "healthy", 4)) {
            healthy.serve(FakeWorker.ECHO);
            RemoteWorker stuckWorker = coordinator.awaitWorker("stuck");
            RemoteWorker healthyWorker = coordinator.awaitWorker("healthy");
            // 1000 jobs of 32 KiB each: about 32 MB of assigns, far beyond what loopback socket
            // buffers absorb, to a worker that never reads.
            String bigPrompt = "x".repeat(32 * 1024);
            for (int i = 0; i < 1000; i++) {
                stuckWorker.dispatch(TestJobs.job("big-" + i, bigPrompt));
            }
            eventually().until(() -> stuckWorker.pendingCount() == 1000);

            long startNs = System.nanoTime();
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            for (Job job : TestJobs.jobs("small", 200)) {
                replies.add(healthyWorker.dispatch(job));
            }
            for (CompletableFuture<JobOutcome> reply : replies) {
                reply.orTimeout(10, TimeUnit.SECONDS).join();
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);

            System.out.printf("MEASURED 200 jobs to a healthy worker beside a non-reading one: %d ms%n", elapsedMs);
            assertThat(healthy.assigned()).hasSize(200);
            assertThat(stuck.socket().getInputStream().available())
                    .as("the stuck worker has unread bytes waiting").isPositive();
            assertThat(stuckWorker.isOpen()).isTrue();
        }
    }

    @Test
    void aCallbackThatBlocksForSecondsDoesNotDelayOtherWorkersTraffic() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(1));
             FakeWorker slowCallbacks = FakeWorker.register(coordinator.address(), "a", 1);
             FakeWorker other = FakeWorker.register(coordinator.address(), "b", 2)) {
            other.serve(FakeWorker.ECHO);
            RemoteWorker a = coordinator.awaitWorker("a");
            RemoteWorker b = coordinator.awaitWorker("b");
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch blocking = new CountDownLatch(1);
            Job job = TestJobs.job("a-1", "p");
            CompletableFuture<JobOutcome> blocked = a.dispatch(job);
            blocked.thenRun(() -> {
                blocking.countDown();
                try {
                    // Stands for a callback doing something slow: held until the test is done.
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            slowCallbacks.answer(slowCallbacks.nextAssign());
            assertThat(blocking.await(10, TimeUnit.SECONDS)).isTrue();

            try {
                long startNs = System.nanoTime();
                List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
                for (Job j : TestJobs.jobs("b", 100)) {
                    replies.add(b.dispatch(j));
                }
                for (CompletableFuture<JobOutcome> reply : replies) {
                    reply.orTimeout(10, TimeUnit.SECONDS).join();
                }
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                System.out.printf("MEASURED 100 jobs while another worker's callback blocks: %d ms%n", elapsedMs);
                // The blocked worker's own connection keeps serving too.
                CompletableFuture<JobOutcome> again = a.dispatch(TestJobs.job("a-2", "p"));
                slowCallbacks.answer(slowCallbacks.nextAssign());
                again.orTimeout(10, TimeUnit.SECONDS).join();
                assertThat(release.getCount()).as("the slow callback is still blocked").isEqualTo(1);
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void callbacksNeverRunOnASelectorThread() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w", 8)) {
            fake.serve(FakeWorker.ECHO);
            RemoteWorker worker = coordinator.awaitWorker("w");
            Set<String> callbackThreads = ConcurrentHashMap.newKeySet();
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            String prefix = coordinator.server.threadNamePrefix();

            for (Job job : TestJobs.jobs("cb", 200)) {
                CompletableFuture<JobOutcome> reply = worker.dispatch(job);
                replies.add(reply.whenComplete((ok, e) -> callbackThreads.add(Thread.currentThread().getName())));
            }
            for (CompletableFuture<JobOutcome> reply : replies) {
                reply.orTimeout(10, TimeUnit.SECONDS).join();
            }

            assertThat(callbackThreads).isNotEmpty().noneMatch(name -> name.startsWith(prefix + "io-"));
            // Those that completed after dispatch returned ran on the server's completion threads.
            assertThat(callbackThreads).anyMatch(name -> name.startsWith(prefix + "completion-"));
        }
    }
}
