package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** PROTOCOL.md rule 4 over real sockets: silence is death, any frame is life, and the coordinator heartbeats. */
class LivenessTest {

    private static TestCoordinator shortHeartbeats() throws IOException {
        return TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofMillis(500)));
    }

    @Test
    void aSilentWorkerIsReapedAfterTheHeartbeatTimeoutAndItsJobsFailRetryably() throws IOException {
        try (TestCoordinator coordinator = shortHeartbeats()) {
            // The silence is counted from the register frame, the worker's last sign of life.
            long registeringNs = System.nanoTime();
            try (FakeWorker silent = FakeWorker.register(coordinator.address(), "silent", 2)) {
                RemoteWorker worker = coordinator.awaitWorker("silent");
                CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "p"));
                silent.nextAssign();

                Throwable failure = reply.handle((ok, e) -> e).orTimeout(10, TimeUnit.SECONDS).join();

                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - registeringNs);
                assertThat(failure).isInstanceOf(ControlException.class)
                        .hasMessageContaining("worker connection lost").hasMessageContaining("silent")
                        .hasMessageContaining("j1");
                assertThat(((ControlException) failure).isRetryable()).isTrue();
                assertThat(failure.getCause()).isInstanceOf(TimeoutException.class)
                        .hasMessageContaining("heartbeat timeout 500 ms").hasMessageContaining("silent");
                assertThat(elapsedMs).as("reaped no earlier than the timeout").isGreaterThanOrEqualTo(495);
                eventually().until(coordinator.pool::isEmpty);
                // The pool changes on the selector thread, the listener hears of it later on the events thread.
                eventually().until(() -> !coordinator.lost.isEmpty());
                assertThat(coordinator.lost).containsExactly(worker);
                assertThat(silent.readUntilClosed()).isEmpty();
            }
        }
    }

    @Test
    void aWorkerThatHeartbeatsStaysAndIsHeartbeatedInTurn() throws IOException {
        try (TestCoordinator coordinator = shortHeartbeats();
             FakeWorker alive = FakeWorker.register(coordinator.address(), "alive", 1)) {
            alive.heartbeatEvery(50);
            alive.serve(FakeWorker.ECHO);
            RemoteWorker worker = coordinator.awaitWorker("alive");

            // Sixteen coordinator heartbeats take at least 1.6 s: more than three heartbeat timeouts.
            eventually().until(() -> heartbeatsReceived(alive) >= 16);

            assertThat(worker.isOpen()).isTrue();
            assertThat(coordinator.pool.snapshot()).containsExactly(worker);
            assertThat(coordinator.lost).isEmpty();
            assertThat(worker.dispatch(TestJobs.job("j1", "p")).orTimeout(10, TimeUnit.SECONDS).join().records())
                    .hasSize(1);
        }
    }

    @Test
    void answersAloneKeepABusyWorkerAlive() throws IOException {
        // A timeout of 1 s, not 500 ms: the fake worker shares this JVM with the coordinator, so a
        // stall of the whole test JVM on a loaded machine (one of 646 ms was seen) silences both
        // sides at once, and the coordinator rightly reaps the silence it then finds.
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofMillis(1_000)));
             FakeWorker busy = FakeWorker.register(coordinator.address(), "busy", 1)) {
            RemoteWorker worker = coordinator.awaitWorker("busy");
            long startNs = System.nanoTime();
            int answered = 0;
            // No heartbeats from the worker: its results are its sign of life, for two timeouts.
            while (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) < 2_000) {
                CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j" + answered, "p"));
                busy.answer(busy.nextAssign());
                reply.orTimeout(10, TimeUnit.SECONDS).join();
                answered++;
            }
            assertThat(worker.isOpen()).isTrue();
            assertThat(coordinator.lost).isEmpty();
        }
    }

    private static long heartbeatsReceived(FakeWorker fake) {
        return fake.received().stream().filter(m -> m instanceof Message.Heartbeat).count();
    }

    /**
     * Not a pass/fail bound: measures how long after a worker's socket drops its pending jobs
     * fail, over a few runs, and prints the median for the record.
     */
    @Test
    void measuresHowQuicklyADroppedWorkersPendingJobsFail() throws IOException {
        long[] runsMs = new long[7];
        try (TestCoordinator coordinator = TestCoordinator.start()) {
            for (int run = 0; run < runsMs.length; run++) {
                FakeWorker fake = FakeWorker.register(coordinator.address(), "drop-" + run, 4);
                RemoteWorker worker = coordinator.awaitWorker(fake);
                List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
                AtomicLong lastFailedNs = new AtomicLong();
                for (var job : TestJobs.jobs("r" + run, 4)) {
                    CompletableFuture<JobOutcome> reply = worker.dispatch(job);
                    reply.whenComplete((ok, e) -> lastFailedNs.accumulateAndGet(System.nanoTime(), Math::max));
                    replies.add(reply);
                }
                for (int i = 0; i < 4; i++) {
                    fake.nextAssign();
                }

                long droppedNs = System.nanoTime();
                fake.close();
                for (CompletableFuture<JobOutcome> reply : replies) {
                    Throwable t = reply.handle((ok, e) -> e).orTimeout(10, TimeUnit.SECONDS).join();
                    assertThat(t instanceof CompletionException ? t.getCause() : t)
                            .isInstanceOf(ControlException.class);
                }
                runsMs[run] = TimeUnit.NANOSECONDS.toMicros(lastFailedNs.get() - droppedNs);
            }
        }
        long[] sorted = runsMs.clone();
        Arrays.sort(sorted);
        System.out.printf("MEASURED drop-to-failure: median %.3f ms over %d runs (all runs, us: %s)%n",
                sorted[sorted.length / 2] / 1000.0, sorted.length, Arrays.toString(runsMs));
    }
}
