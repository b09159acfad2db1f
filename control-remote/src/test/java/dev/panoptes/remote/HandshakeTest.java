package dev.panoptes.remote;

import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** The register handshake: PROTOCOL.md's first-frame rules, over real sockets. */
class HandshakeTest {

    @Test
    void aConnectionThatSendsNothingIsRejectedAtTheHandshakeTimeout() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.handshakeTimeout(Duration.ofMillis(200)));
             FakeWorker silent = FakeWorker.connect(coordinator.address())) {
            long startNs = System.nanoTime();

            assertThat(silent.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("no register frame").contains("200 ms"));

            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs)).isGreaterThanOrEqualTo(150);
            eventually().until(() -> coordinator.rejected.size() == 1);
            assertThat(coordinator.rejectedFrom).containsExactly(silent.socket().getLocalSocketAddress());
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void aFirstFrameOtherThanRegisterIsRejected() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.connect(coordinator.address())) {
            fake.send(new Message.Heartbeat("w1"));

            assertThat(fake.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("first frame must be register").contains("heartbeat"));
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void aWrongTokenIsRejectedAndNeverGetsAnAssign() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.token("s3cret"));
             FakeWorker good = FakeWorker.register(coordinator.address(),
                     new Message.Register("good", 1, 1, "s3cret", Map.of()));
             FakeWorker bad = FakeWorker.register(coordinator.address(),
                     new Message.Register("bad", 1, 1, "guess", Map.of()))) {
            good.serve(FakeWorker.ECHO);
            RemoteWorker worker = coordinator.awaitWorker("good");
            // Jobs flow to the pool while the bad connection is being turned away.
            CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "p"));

            assertThat(bad.readUntilClosed()).hasValueSatisfying(reason -> assertThat(reason).contains("wrong token")
                    .contains("--token").doesNotContain("s3cret"));
            assertThat(bad.received()).noneMatch(m -> m instanceof Message.Assign || m instanceof Message.Registered);
            assertThat(reply.orTimeout(10, TimeUnit.SECONDS).join().records()).hasSize(1);
            assertThat(coordinator.pool.snapshot()).containsExactly(worker);
            // The listener hears of a rejection on the server's events thread, after the rejected
            // frame went out: the bad peer reading it proves nothing about the report yet.
            eventually().until(() -> !coordinator.rejected.isEmpty());
            assertThat(coordinator.rejected).singleElement().asString().contains("wrong token");
            assertThat(coordinator.rejectedFrom).containsExactly(bad.socket().getLocalSocketAddress());
        }
    }

    @Test
    void aMissingTokenIsRejectedWhenTheCoordinatorRequiresOne() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.token("s3cret"));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1)) {
            assertThat(fake.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("requires a token"));
        }
    }

    @Test
    void anUnsupportedProtocolVersionIsRejected() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(),
                     new Message.Register("w1", 1, 2, null, Map.of()))) {
            assertThat(fake.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("unsupported protocol version 2").contains("version 1"));
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "slash/not/allowed", "ünïcode", "newline\nin-id",
            "a-worker-id-that-is-far-too-long-to-be-accepted-by-the-coordinator-because-it-has-more-than-128-characters-xxxxxxxxxxxxxxxxxxxxxxxxxx"})
    void anInvalidWorkerIdIsRejected(String workerId) throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), workerId, 1)) {
            assertThat(fake.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("invalid workerId").contains("[A-Za-z0-9._:@-]"));
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void aWorkerIdUsingEveryAllowedCharacterRegisters() throws IOException {
        String id = "Az09._:@-" + "x".repeat(119);
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), id, 1)) {
            assertThat(coordinator.awaitWorker(id).id()).hasSize(128);
            assertThat(fake.recv()).contains(new Message.Registered(200, (long) ServerOptions.defaults().maxFrameBytes()));
        }
    }

    @Test
    void capacityZeroIsTreatedAsOne() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(20)));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w0", 0)) {
            RemoteWorker worker = coordinator.awaitWorker("w0");
            assertThat(worker.capacity()).isEqualTo(1);

            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            for (var job : TestJobs.jobs("c", 3)) {
                replies.add(worker.dispatch(job));
            }
            for (int i = 0; i < 3; i++) {
                // One assign, then the coordinator falls quiet until that one is answered.
                List<dev.panoptes.control.Job> sent = fake.assignsUntilHeartbeat();
                assertThat(sent).hasSize(1);
                fake.answer(sent.get(0));
            }

            replies.forEach(r -> r.orTimeout(10, TimeUnit.SECONDS).join());
            assertThat(fake.maxOutstanding()).isEqualTo(1);
        }
    }

    @Test
    void aHugeCapacityIsClampedToTheCoordinatorsMaximum() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.maxCapacity(8));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "big", Integer.MAX_VALUE)) {
            fake.serve(FakeWorker.HOLD);
            RemoteWorker worker = coordinator.awaitWorker("big");
            assertThat(worker.capacity()).isEqualTo(8);

            for (var job : TestJobs.jobs("c", 12)) {
                worker.dispatch(job);
            }

            eventually().until(() -> fake.assigned().size() == 8 && worker.queuedCount() == 4);
            assertThat(worker.pendingCount()).isEqualTo(8);
        }
    }

    @Test
    void aRegisteredWorkerCarriesItsLabels() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(),
                     new Message.Register("w1", 4, 1, null, Map.of("model", "llama-3.1-8b")))) {
            RemoteWorker worker = coordinator.awaitWorker("w1");

            assertThat(worker.labels()).containsExactly(Map.entry("model", "llama-3.1-8b"));
            assertThat(worker.remoteAddress()).isEqualTo(fake.socket().getLocalSocketAddress());
            assertThat(worker.toString()).contains("w1").contains("capacity=4");
        }
    }

    @Test
    void aPeerThatClosesBeforeRegisteringIsReportedAndLeavesNoTrace() throws IOException {
        try (TestCoordinator coordinator = TestCoordinator.start()) {
            FakeWorker.connect(coordinator.address()).close();

            eventually().until(() -> coordinator.rejected.size() == 1);
            assertThat(coordinator.rejected.get(0)).contains("before registering");
            assertThat(coordinator.pool.isEmpty()).isTrue();
            assertThat(coordinator.lost).isEmpty();
        }
    }
}
