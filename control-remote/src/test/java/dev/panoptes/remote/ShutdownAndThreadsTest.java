package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Starting, stopping, and the fixed thread budget. */
class ShutdownAndThreadsTest {

    private static long liveThreadsStartingWith(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    private static ControlException failureOf(CompletableFuture<JobOutcome> future) {
        Throwable t = future.handle((ok, e) -> e).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(t).as("the future should have failed").isNotNull();
        return (ControlException) (t instanceof CompletionException ? t.getCause() : t);
    }

    @Test
    void closeFailsAllOutstandingWorkRetryablyEndsItsThreadsAndFreesThePort() throws Exception {
        TestCoordinator coordinator = TestCoordinator.start(b -> b.dispatchQueueCapacity(2));
        String prefix = coordinator.server.threadNamePrefix();
        int port = coordinator.address().getPort();
        ExecutorService dispatcher = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-blocked-dispatcher"));
        try (FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 2)) {
            RemoteWorker worker = coordinator.awaitWorker("w1");
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            List<Job> jobs = TestJobs.jobs("s", 5);
            for (Job job : jobs.subList(0, 4)) {
                replies.add(worker.dispatch(job)); // two on the wire, two queued
            }
            fake.nextAssign();
            fake.nextAssign();
            eventually().until(() -> worker.queuedCount() == 2);
            Future<CompletableFuture<JobOutcome>> blockedDispatch = dispatcher.submit(() -> worker.dispatch(jobs.get(4)));
            eventually().until(() -> TestCoordinator.isBlockedInDispatch("test-blocked-dispatcher"));

            coordinator.close();

            replies.add(blockedDispatch.get(10, TimeUnit.SECONDS));
            for (CompletableFuture<JobOutcome> onTheWire : replies.subList(0, 2)) {
                ControlException failure = failureOf(onTheWire);
                assertThat(failure.isRetryable()).isTrue();
                assertThat(failure).hasMessageContaining("worker connection lost").hasMessageContaining("w1");
            }
            // Queued or still waiting for room: they never reached the worker, and say so.
            for (CompletableFuture<JobOutcome> neverSent : replies.subList(2, 5)) {
                assertThat(failureOf(neverSent)).isInstanceOf(DispatchRefusedException.class)
                        .hasMessageContaining("was not sent to worker w1");
            }
            assertThat(liveThreadsStartingWith(prefix)).isZero();
            try (ServerSocket again = new ServerSocket()) {
                again.bind(new InetSocketAddress("127.0.0.1", port));
                assertThat(again.getLocalPort()).isEqualTo(port);
            }
            assertThat(coordinator.pool.isEmpty()).isTrue();
            assertThat(fake.readUntilClosed()).isEmpty();
            assertThat(failureOf(worker.dispatch(TestJobs.job("after", "p"))).isRetryable()).isTrue();
        } finally {
            dispatcher.shutdownNow();
        }
    }

    @Test
    void closeIsIdempotent() throws IOException {
        TestCoordinator coordinator = TestCoordinator.start();
        coordinator.close();
        coordinator.close();
        assertThat(coordinator.server.toString()).contains("closed");
    }

    @Test
    void startingOnPortZeroReportsTheBoundPort() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             Socket socket = new Socket("127.0.0.1", coordinator.address().getPort())) {
            assertThat(coordinator.address().getPort()).isPositive();
            assertThat(coordinator.address().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
            assertThat(socket.isConnected()).isTrue();
        }
    }

    @Test
    void startingOnAPortInUseFailsNamingTheAddress() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", taken.getLocalPort());
            ServerOptions options = ServerOptions.builder().bind(address).build();

            assertThatThrownBy(() -> WorkerServer.start(options, new SharedPool()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(String.valueOf(taken.getLocalPort()))
                    .hasMessageContaining("another coordinator");
        }
    }

    @Test
    void fiveHundredConnectedWorkersShareAFixedSetOfThreads() throws IOException {
        int workers = 500;
        List<FakeWorker> fakes = new ArrayList<>();
        int threadsBefore = Thread.activeCount();
        // The fakes stand for 500 machines but all connect from 127.0.0.1 without waiting to be
        // registered: the per-address cap on connections waiting to register (64) would refuse
        // some whenever the selector falls behind the connects.
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(2).completionThreads(2)
                .maxUnregisteredPerAddress(workers))) {
            String prefix = coordinator.server.threadNamePrefix();
            try {
                for (int i = 0; i < workers; i++) {
                    fakes.add(FakeWorker.register(coordinator.address(), "w" + i, 1));
                }
                eventually().until(() -> coordinator.pool.size() == workers);

                // Every connection is live: one job each, answered by its fake on this thread.
                List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
                for (int i = 0; i < workers; i++) {
                    replies.add(coordinator.awaitWorker(fakes.get(i)).dispatch(TestJobs.job("j" + i, "p")));
                }
                for (FakeWorker fake : fakes) {
                    fake.answer(fake.nextAssign());
                }
                for (CompletableFuture<JobOutcome> reply : replies) {
                    reply.orTimeout(10, TimeUnit.SECONDS).join();
                }

                long serverThreads = liveThreadsStartingWith(prefix);
                int activeDelta = Thread.activeCount() - threadsBefore;
                System.out.printf("MEASURED %d connected workers: %d server threads (%s*), Thread.activeCount delta %d%n",
                        workers, serverThreads, prefix, activeDelta);
                // 2 selector threads, 2 completion threads, 1 listener thread.
                assertThat(serverThreads).isLessThanOrEqualTo(5);
                assertThat(activeDelta).isLessThan(20);
            } finally {
                for (FakeWorker fake : fakes) {
                    fake.close();
                }
            }
        }
    }
}
